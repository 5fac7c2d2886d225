// libFuzzer target for the `fields=` lists of the ipfix and netflow9 outputs
// (output/common/export_field_list.cpp): any text against the biflow, uniflow and v9
// vocabularies. A list that parses must give a non-empty, duplicate-free selection in
// vocabulary order, and every encoder must accept it: the IPFIX encoder (biflow and uniflow)
// and the v9 encoder compile their templates from it and encode a record of each IP version
// into a message whose template and record lengths agree. A refused list must name a reason
// and the allowed names. Anything thrown is a bug.
//
//   build/fuzz/export_field_list_fuzz -max_len=256
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string_view>
#include <vector>

#include "output/common/export_field_list.hpp"
#include "output/common/ipfix_encoder.hpp"
#include "output/netflow9/netflow9_encoder.hpp"

namespace {

using namespace rowprobe;
using namespace rowprobe::output;

struct Sink final : MessageSink {
    std::size_t bytes = 0;
    bool sendMessage(std::span<const std::uint8_t> m, std::uint32_t, bool) override {
        if (m.size() < 20) std::abort();
        const std::size_t version = std::size_t{m[0]} << 8 | m[1];
        // IPFIX: the header's length is the message's; v9: a record count instead.
        if (version != 9 && (version != 10 || (std::size_t{m[2]} << 8 | m[3]) != m.size()))
            std::abort();
        bytes += m.size();
        return true;
    }
};

FlowRecord sample(std::uint8_t ipVersion) {
    FlowRecord r{};
    r.ipVersion = ipVersion;
    r.srcAddr[10] = r.srcAddr[11] = 0xFF;
    r.dstAddr[10] = r.dstAddr[11] = 0xFF;
    r.proto = 6;
    r.packets = {3, 2};
    r.bytes = {300, 200};
    r.timeFirst = 1'700'000'000'000'000'000ULL;
    r.timeLast = r.timeFirst + 5'000'000;
    return r;
}

void checkSelection(const ExportFieldList& l, std::span<const FieldId> vocabulary) {
    if (!l.error.empty()) {
        if (l.known.empty() || !l.core.empty()) std::abort();
        return;
    }
    if (l.core.empty()) std::abort();
    std::size_t last = 0;
    for (std::size_t i = 0; i < l.core.size(); ++i) {
        const auto at = std::find(vocabulary.begin(), vocabulary.end(), l.core[i]);
        if (at == vocabulary.end()) std::abort();
        const auto index = static_cast<std::size_t>(at - vocabulary.begin());
        if (i != 0 && index <= last) std::abort();  // vocabulary order, no duplicates
        last = index;
    }
}

void encodeIpfix(const ExportFieldList& l, bool uniflow) {
    if (!l.error.empty()) return;
    Sink sink;
    EncoderConfig config;
    config.uniflow = uniflow;
    config.maxMessageSize = 1458;
    IpfixEncoder encoder(config, l.core, sink);
    for (std::uint8_t v : {std::uint8_t{4}, std::uint8_t{6}}) {
        const IpfixTemplate& t = encoder.templateFor(v);
        std::size_t length = 0;
        for (const IpfixElement& e : t.elements) length += e.length;
        if (length != t.recordLength || t.elements.size() != l.core.size()) std::abort();
        encoder.add(sample(v));
    }
    encoder.flush();
    if (sink.bytes == 0) std::abort();
}

void encodeV9(const ExportFieldList& l) {
    if (!l.error.empty()) return;
    Sink sink;
    Netflow9Config config;
    config.fields = l.core;
    Netflow9Encoder encoder(config, sink);
    for (std::uint8_t v : {std::uint8_t{4}, std::uint8_t{6}}) {
        std::size_t length = 0;
        for (const auto& f : encoder.layout(v == 6).fields) length += f.length;
        if (length != encoder.layout(v == 6).recordLength) std::abort();
        encoder.add(sample(v));
    }
    encoder.flush();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    for (bool uniflow : {false, true}) {
        const auto vocabulary = ipfixFieldVocabulary(uniflow);
        const auto basic = uniflow ? ipfixUniflowFields() : ipfixBasicFields();
        const ExportFieldList l = parseExportFieldList(text, vocabulary, basic, true);
        checkSelection(l, vocabulary);
        encodeIpfix(l, uniflow);
    }
    const ExportFieldList v9 =
        parseExportFieldList(text, netflow9FieldVocabulary(), netflow9DefaultFields(), false);
    checkSelection(v9, netflow9FieldVocabulary());
    if (v9.error.empty() && !v9.others.empty()) std::abort();
    encodeV9(v9);
    return 0;
}
