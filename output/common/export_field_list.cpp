#include "output/common/export_field_list.hpp"

#include <algorithm>

namespace rowprobe::output {

std::vector<std::string> exportFieldNames(std::span<const FieldId> vocabulary) {
    std::vector<std::string> names{"basic"};
    for (FieldId id : vocabulary) names.emplace_back(fieldSpec(id).name);
    return names;
}

ExportFieldList parseExportFieldList(std::string_view list, std::span<const FieldId> vocabulary,
                                     std::span<const FieldId> basic, bool allowOthers) {
    ExportFieldList out;
    std::vector<bool> chosen(vocabulary.size(), false);
    auto refuse = [&](std::string problem, std::string_view token) {
        out.error = std::move(problem);
        out.offending = std::string(token);
        out.known = exportFieldNames(vocabulary);
        out.core.clear();
        out.others.clear();
        return out;
    };
    std::size_t pos = 0;
    while (pos <= list.size()) {
        const std::size_t comma = std::min(list.find(',', pos), list.size());
        const std::string_view token = list.substr(pos, comma - pos);
        pos = comma + 1;
        if (token.empty()) return refuse("empty field name", token);
        if (token == "basic") {
            for (FieldId id : basic) {
                const auto at = std::find(vocabulary.begin(), vocabulary.end(), id);
                if (at != vocabulary.end())
                    chosen[static_cast<std::size_t>(at - vocabulary.begin())] = true;
            }
            continue;
        }
        const FieldSpec* spec = findField(token);
        if (spec != nullptr) {
            const auto id = static_cast<FieldId>(spec - coreFields().data());
            const auto at = std::find(vocabulary.begin(), vocabulary.end(), id);
            if (at == vocabulary.end()) {
                return refuse("field '" + std::string(token) +
                                  "' is not sent by this output (it has no element in its "
                                  "templates here)",
                              token);
            }
            chosen[static_cast<std::size_t>(at - vocabulary.begin())] = true;
            continue;
        }
        if (!allowOthers) return refuse("unknown field '" + std::string(token) + "'", token);
        if (std::find(out.others.begin(), out.others.end(), token) == out.others.end())
            out.others.emplace_back(token);
    }
    for (std::size_t i = 0; i < vocabulary.size(); ++i) {
        if (chosen[i]) out.core.push_back(vocabulary[i]);
    }
    if (out.core.empty()) {
        return refuse("names no flow field: give at least one core field or 'basic'", list);
    }
    return out;
}

}  // namespace rowprobe::output
