// libFuzzer target for the ndpi plugin's own code around nDPI 4.2: the IP packet handed to nDPI
// (ipPacketForNdpi), the label's serialisation (writeInstance: ndpi_protocol2name, the risk
// names, bounded copies out of nDPI's flow struct) and the flow heap's release. The input is a
// sequence of packets, each a 2-byte big-endian length and that many bytes from the IP header
// on; all of them go to one flow of a module that lives for the whole run, as one worker's would.
// Every instance must read back in bounds, and the flow's heap must be empty after release.
// As in the flow table, a flow's packets share one IP version: a packet with another is skipped.
// Packets with another transport are handed on: DetectionModule::feed must keep them from nDPI
// (nDPI 4.2 frees a flow's TLS reassembly buffer only while the flow is TCP).
//
//   ./ndpi_record_fuzz -max_len=4096 corpus/ndpi_record_fuzz
#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include "process/ndpi/ndpi_module.hpp"
#include "process/ndpi/ndpi_record.hpp"

namespace {

void check(bool condition) {
    if (!condition) std::abort();
}

rowprobe::ndpi::DetectionModule& module() {
    static rowprobe::ndpi::DetectionModule m{rowprobe::ndpi::ModuleConfig{}};
    return m;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace rowprobe;
    using namespace rowprobe::ndpi;
    DetectionModule& m = module();
    const auto slot = std::make_unique<FlowSlot>();
    std::memset(slot.get(), 0, sizeof(FlowSlot));
    std::uint64_t ts = 1'600'000'000'000'000'000ULL;
    std::size_t at = 0;
    int first = -1;  // IP version of the flow's first packet
    while (at + 2 <= size && !slot->done) {
        const std::size_t n = std::min<std::size_t>((data[at] << 8) | data[at + 1], size - at - 2);
        at += 2;
        std::vector<std::uint8_t> copy(data + at, data + at + n);  // exact bounds for ASan
        at += n;
        NdpiPacket ip{};
        if (ipPacketForNdpi(copy, 0, ip) != Skip::None) continue;
        const int version = ip.ip[0] >> 4;
        if (first < 0) first = version;
        if (version != first) continue;
        check(ip.ip.data() == copy.data() && ip.ip.size() <= copy.size());
        slot->proto = m.feed(*slot, ip, ts);
        ts += 1'000'000;
        if (slot->proto.app_protocol != NDPI_PROTOCOL_UNKNOWN && !m.extraDissectionPossible(*slot))
            slot->done = true;
    }
    if (!slot->done) m.giveUp(*slot, true);
    std::vector<std::uint8_t> buf(1 << 16);
    InstanceWriter out(buf.data(), buf.size());
    out.setPlugin(0);
    writeInstance(m, *slot, out);
    for (const PluginInstance i : PluginInstances(out.data(), out.size())) {
        for (const FieldSpec& f : ndpiFields()) {
            if (f.type == FieldType::String || f.type == FieldType::Binary) {
                const auto b = readPluginBytes(f, i.data);
                check(b.empty() || (b.data() >= i.data.data() &&
                                    b.data() + b.size() <= i.data.data() + i.data.size()));
            } else {
                (void)readPluginUnsigned(f, i.data);
            }
        }
    }
    m.release(*slot);
    check(m.flowHeap().liveBytes() == 0);
    return 0;
}
