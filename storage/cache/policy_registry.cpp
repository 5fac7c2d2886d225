#include "cache/policy_registry.hpp"

#include <algorithm>

#include "rowprobe/errors.hpp"

namespace rowprobe::storage {

RowPolicyRegistry& RowPolicyRegistry::instance() {
    static RowPolicyRegistry registry;
    return registry;
}

bool RowPolicyRegistry::add(const RowPolicyInfo& info) {
    if (const RowPolicyInfo* existing = find(info.name)) {
        m_duplicates.push_back("row policy '" + std::string(info.name) + "' is registered twice (" +
                               std::string(existing->summary) + " / " + std::string(info.summary) + ")");
        return false;
    }
    m_entries.push_back(info);
    return true;
}

void RowPolicyRegistry::checkConsistent() const {
    if (!m_duplicates.empty()) {
        throw ConfigError({.component = "row policy registry", .problem = m_duplicates.front()});
    }
}

const RowPolicyInfo* RowPolicyRegistry::find(std::string_view name) const {
    for (const auto& e : m_entries) {
        if (e.name == name) return &e;
    }
    return nullptr;
}

std::vector<const RowPolicyInfo*> RowPolicyRegistry::list() const {
    std::vector<const RowPolicyInfo*> out;
    for (const auto& e : m_entries) out.push_back(&e);
    std::sort(out.begin(), out.end(), [](auto* a, auto* b) { return a->name < b->name; });
    return out;
}

std::vector<std::string> rowPolicyNames() {
    std::vector<std::string> names;
    for (const auto* p : RowPolicyRegistry::instance().list()) names.emplace_back(p->name);
    return names;
}

}  // namespace rowprobe::storage
