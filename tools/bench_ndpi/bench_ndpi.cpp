// rowprobe-bench-ndpi: what the ndpi plugin's work costs per packet, on a capture.
//
//   rowprobe-bench-ndpi FILE.pcap [--rounds N] [--packets CAP] [--tunnel inner]
//
// Loads the capture, parses every packet once (rowprobe's packet parser) and groups packets by
// biflow; then, per round, on one thread and with one detection module made before the rounds
// (nDPI's start-up is not timed), runs exactly the plugin's work: every packet of a flow not yet
// done goes to nDPI under the plugin's rule (DetectionModule::step, cap CAP, default 32), every
// flow is given up if still undetected, serialised (writeInstance) and released. The flow
// table, pools and outputs are not in the loop. Prints the median over the rounds of ns per
// packet of the whole capture, the packets given to nDPI and the flows labelled.
#include <pcap/pcap.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "process/ndpi/ndpi_module.hpp"
#include "process/ndpi/ndpi_record.hpp"
#include "rowprobe/packet.hpp"

namespace {

using namespace rowprobe;

struct Pkt {
    std::uint32_t flow;
    std::uint16_t fragOffset;
    TimeNs ts;
    std::vector<std::uint8_t> ip;  ///< from the IP header to the end of the capture
};

std::vector<Pkt> load(const char* file, const ParserConfig& config, std::size_t& flowCount) {
    char err[PCAP_ERRBUF_SIZE];
    pcap_t* p = pcap_open_offline(file, err);
    if (p == nullptr) {
        std::fprintf(stderr, "rowprobe-bench-ndpi: %s\n", err);
        std::exit(2);
    }
    LinkType link{};
    if (!linkTypeFromPcap(pcap_datalink(p), link)) {
        std::fprintf(stderr, "rowprobe-bench-ndpi: unsupported link type\n");
        std::exit(2);
    }
    std::unordered_map<std::string, std::uint32_t> ids;
    std::vector<Pkt> out;
    pcap_pkthdr* h;
    const u_char* d;
    AnomalyCounters anomalies;
    while (pcap_next_ex(p, &h, &d) == 1) {
        ParsedPacket pp;
        const TimeNs ts = static_cast<TimeNs>(h->ts.tv_sec) * kNsPerSec +
                          static_cast<TimeNs>(h->ts.tv_usec) * 1000;
        if (!parsePacket({d, h->caplen, h->len, ts}, link, config, pp, anomalies)) continue;
        if (pp.l3Offset >= pp.capLen) continue;
        const auto b = pp.key.bytes();
        const std::string key(reinterpret_cast<const char*>(b.data()), b.size());
        const auto id = ids.try_emplace(key, static_cast<std::uint32_t>(ids.size())).first->second;
        out.push_back({id, pp.frag.offset, ts, {pp.frame + pp.l3Offset, pp.frame + pp.capLen}});
    }
    pcap_close(p);
    flowCount = ids.size();
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr,
                     "usage: rowprobe-bench-ndpi FILE.pcap [--rounds N] [--packets CAP] "
                     "[--tunnel inner]\n");
        return 2;
    }
    int rounds = 11;
    int cap = 32;
    ParserConfig config;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (std::strcmp(argv[i], "--rounds") == 0) rounds = std::max(1, std::atoi(argv[i + 1]));
        if (std::strcmp(argv[i], "--packets") == 0)
            cap = std::clamp(std::atoi(argv[i + 1]), 1, 65535);
        if (std::strcmp(argv[i], "--tunnel") == 0 && std::strcmp(argv[i + 1], "inner") == 0)
            config.tunnels = TunnelMode::Inner;
    }
    std::size_t flows = 0;
    const std::vector<Pkt> pkts = load(argv[1], config, flows);
    if (pkts.empty()) {
        std::fprintf(stderr, "rowprobe-bench-ndpi: no packets\n");
        return 2;
    }
    ndpi::DetectionModule module{ndpi::ModuleConfig{}};
    std::vector<ndpi::FlowSlot> slots(flows);
    std::vector<std::uint8_t> buf(1 << 16);
    std::size_t fed = 0;
    std::size_t labelled = 0;
    std::vector<double> samples;
    for (int r = 0; r < rounds; ++r) {
        std::memset(static_cast<void*>(slots.data()), 0, slots.size() * sizeof(ndpi::FlowSlot));
        const auto t0 = std::chrono::steady_clock::now();
        for (const Pkt& p : pkts) {
            ndpi::FlowSlot& s = slots[p.flow];
            if (s.done) continue;
            ndpi::NdpiPacket ip{};
            if (ndpi::ipPacketForNdpi(p.ip, p.fragOffset, ip) != ndpi::Skip::None) continue;
            module.step(s, ip, p.ts, static_cast<std::uint16_t>(cap), true);
        }
        fed = 0;
        labelled = 0;
        for (ndpi::FlowSlot& s : slots) {
            if (!s.done) module.giveUp(s, true);
            InstanceWriter out(buf.data(), buf.size());
            ndpi::writeInstance(module, s, out);
            fed += s.fed;
            labelled += s.proto.app_protocol != NDPI_PROTOCOL_UNKNOWN ||
                        s.proto.master_protocol != NDPI_PROTOCOL_UNKNOWN;
            module.release(s);
        }
        const auto t1 = std::chrono::steady_clock::now();
        samples.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() /
                          static_cast<double>(pkts.size()));
    }
    std::sort(samples.begin(), samples.end());
    std::printf(
        "%s: %zu packets, %zu flows, cap %d: %.1f ns/packet (median of %d rounds); "
        "%zu packets given to nDPI (%.1f %%), %zu flows labelled\n",
        argv[1], pkts.size(), flows, cap, samples[samples.size() / 2], rounds, fed,
        100.0 * static_cast<double>(fed) / static_cast<double>(pkts.size()), labelled);
    return 0;
}
