// bench_parser: the packet parser alone on one core, for each --tunnel mode.
//
//   bench_parser CAPTURE [REPS] [MODE]      (MODE: outer, inner or both; default all three)
//
// Loads the first 4096 frames of CAPTURE into one buffer (so that the parse, not memory, is
// measured), then parses them 64 times in a row, REPS times per mode, modes interleaved (outer,
// inner, both, outer, ...), and prints the minimum and the median ns/packet of each mode. The minimum is what to compare on a shared machine: other processes
// only ever add time. With -DROWPROBE_BENCH_BASELINE the same source builds against a parser
// without tunnel support (one mode, "baseline"), for an A/B against an older tree.
#include <pcap/pcap.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "rowprobe/packet.hpp"

using namespace rowprobe;

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s CAPTURE [REPS]\n", argv[0]);
        return 2;
    }
    const int reps = argc > 2 ? std::atoi(argv[2]) : 31;
    char err[PCAP_ERRBUF_SIZE];
    pcap_t* in = pcap_open_offline(argv[1], err);
    if (in == nullptr) {
        std::fprintf(stderr, "%s\n", err);
        return 1;
    }
    LinkType link = LinkType::Ethernet;
    if (!linkTypeFromPcap(pcap_datalink(in), link)) {
        std::fprintf(stderr, "unsupported link type %d\n", pcap_datalink(in));
        return 1;
    }
    constexpr std::size_t kFrames = 4096;
    constexpr int kPasses = 64;
    std::vector<std::uint8_t> arena;
    std::vector<std::pair<std::size_t, std::uint32_t>> spans;  // offset, length
    pcap_pkthdr* h = nullptr;
    const u_char* data = nullptr;
    while (spans.size() < kFrames && pcap_next_ex(in, &h, &data) == 1) {
        spans.emplace_back(arena.size(), h->caplen);
        arena.insert(arena.end(), data, data + h->caplen);
    }
    pcap_close(in);
    std::vector<RawPacket> raws;
    for (const auto& [off, len] : spans) raws.push_back(RawPacket{arena.data() + off, len, len, 0});

#ifdef ROWPROBE_BENCH_BASELINE
    const std::vector<std::pair<std::string, ParserConfig>> modes = {{"baseline", {}}};
#else
    std::vector<std::pair<std::string, ParserConfig>> modes = {
        {"ipfixprobe", {.tunnels = TunnelMode::Ipfixprobe}},
        {"outer", {.tunnels = TunnelMode::Outer}},
        {"inner", {.tunnels = TunnelMode::Inner}},
        {"both", {.tunnels = TunnelMode::Both}}};
#endif
#ifndef ROWPROBE_BENCH_BASELINE
    if (argc > 3) {
        std::erase_if(modes, [&](const auto& m) { return m.first != argv[3]; });
        if (modes.empty()) {
            std::fprintf(stderr, "unknown mode '%s': ipfixprobe, outer, inner or both\n", argv[3]);
            return 2;
        }
    }
#endif
    std::vector<std::vector<double>> ns(modes.size());
    std::uint64_t sink = 0;
    for (int r = 0; r < reps; ++r) {
        for (std::size_t m = 0; m < modes.size(); ++m) {
            AnomalyCounters anomalies;
            const auto t0 = std::chrono::steady_clock::now();
#ifdef ROWPROBE_BENCH_BASELINE
            ParsedPacket p;
            for (int pass = 0; pass < kPasses; ++pass) {
                for (const RawPacket& raw : raws) {
                    if (parsePacket(raw, link, modes[m].second, p, anomalies)) sink += p.ipLen;
                }
            }
#else
            std::array<ParsedPacket, kMaxLayers> layers;
            for (int pass = 0; pass < kPasses; ++pass) {
                for (const RawPacket& raw : raws) {
                    const std::size_t n =
                        modes[m].second.tunnels == TunnelMode::Both
                            ? parsePacketLayers(raw, link, modes[m].second, layers, anomalies)
                            : (parsePacket(raw, link, modes[m].second, layers[0], anomalies) ? 1
                                                                                             : 0);
                    if (n != 0) sink += layers[0].ipLen;
                }
            }
#endif
            const auto t1 = std::chrono::steady_clock::now();
            ns[m].push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() /
                            static_cast<double>(raws.size() * kPasses));
        }
    }
    std::printf("%zu frames, %d reps per mode (interleaved)\n", raws.size(), reps);
    for (std::size_t m = 0; m < modes.size(); ++m) {
        std::sort(ns[m].begin(), ns[m].end());
        std::printf("%-8s min %6.2f ns/packet   median %6.2f ns/packet\n", modes[m].first.c_str(),
                    ns[m].front(), ns[m][ns[m].size() / 2]);
    }
    return sink == 42 ? 3 : 0;  // keeps the parse from being optimised away
}
