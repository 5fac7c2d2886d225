// Helpers of the l7 ground-truth tests: the packets of a capture as process plugins see them
// (rowprobe's packet parser, payload after the TCP/UDP header), grouped into biflows.
#pragma once

#include <arpa/inet.h>
#include <pcap/pcap.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "rowprobe/packet.hpp"

namespace rowprobe::test {

inline std::string ipText(const std::array<std::uint8_t, 16>& a) {
    char buf[INET6_ADDRSTRLEN];
    static constexpr std::uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (std::memcmp(a.data(), kMapped, 12) == 0) {
        inet_ntop(AF_INET, a.data() + 12, buf, sizeof buf);
    } else {
        inet_ntop(AF_INET6, a.data(), buf, sizeof buf);
    }
    return buf;
}

inline std::string hex(const std::uint8_t* p, std::size_t n) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string s;
    for (std::size_t i = 0; i < n; ++i) {
        s += kHex[p[i] >> 4];
        s += kHex[p[i] & 15];
    }
    return s;
}

template <class T>
std::string list(const T* values, std::size_t n) {
    std::string s = "[";
    for (std::size_t i = 0; i < n; ++i) s += (i ? "|" : "") + std::to_string(values[i]);
    return s + "]";
}

struct Packet {
    std::string src, dst;
    std::uint16_t sport = 0, dport = 0;
    std::uint8_t proto = 0;
    std::vector<std::uint8_t> payload;
};

// Every parsed packet of the capture with its L4 payload (as process plugins see it).
inline std::vector<Packet> readPackets(const std::filesystem::path& pcapFile) {
    char err[PCAP_ERRBUF_SIZE];
    pcap_t* p = pcap_open_offline(pcapFile.c_str(), err);
    if (p == nullptr) return {};
    const auto link = static_cast<LinkType>(pcap_datalink(p));
    std::vector<Packet> out;
    pcap_pkthdr* hdr;
    const u_char* data;
    ParserConfig config;
    AnomalyCounters anomalies;
    while (pcap_next_ex(p, &hdr, &data) == 1) {
        const RawPacket raw{data, hdr->caplen, hdr->len, 0};
        ParsedPacket pp;
        if (!parsePacket(raw, link, config, pp, anomalies)) continue;
        const auto pl = pp.payload();
        out.push_back({ipText(pp.srcAddr()),
                       ipText(pp.dstAddr()),
                       pp.srcPort(),
                       pp.dstPort(),
                       pp.key.proto,
                       {pl.begin(), pl.end()}});
    }
    pcap_close(p);
    return out;
}

inline std::string flowId(const Packet& p) {
    // Direction-free: both directions of a connection share one id.
    const std::string a = p.src + ':' + std::to_string(p.sport);
    const std::string b = p.dst + ':' + std::to_string(p.dport);
    return (a < b ? a + ' ' + b : b + ' ' + a) + ' ' + std::to_string(p.proto);
}

}  // namespace rowprobe::test
