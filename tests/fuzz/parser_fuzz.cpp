// libFuzzer target for the packet parser. The first input byte chooses the link type (low
// nibble), the tunnel mode (bits 4-5) and the VLAN key (bit 7); the rest is the frame, copied
// into a buffer of exactly its length so ASan sees every overread. Besides memory errors it
// aborts when a successful parse breaks the ParsedPacket invariants on any layer.
//
//   cmake -DCMAKE_CXX_COMPILER=clang++ ... && ninja parser_fuzz
//   ./parser_fuzz -max_len=512 -runs=10000000
#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "rowprobe/packet.hpp"

namespace {

constexpr rowprobe::LinkType kLinks[] = {rowprobe::LinkType::Ethernet,
                                         rowprobe::LinkType::Raw,
                                         rowprobe::LinkType::LinuxSll,
                                         rowprobe::LinkType::Null,
                                         rowprobe::LinkType::LinuxSll2,
                                         rowprobe::LinkType::Ppp,
                                         rowprobe::LinkType::PppHdlc,
                                         rowprobe::LinkType::CiscoHdlc,
                                         rowprobe::LinkType::Loop,
                                         rowprobe::LinkType::Ieee80211,
                                         rowprobe::LinkType::Ieee80211Radiotap};
constexpr rowprobe::TunnelMode kModes[] = {rowprobe::TunnelMode::Outer, rowprobe::TunnelMode::Inner,
                                           rowprobe::TunnelMode::Both,
                                           rowprobe::TunnelMode::Ipfixprobe};

void check(bool condition) {
    if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const rowprobe::LinkType link = kLinks[(data[0] & 0x0F) % std::size(kLinks)];
    const std::size_t len = size - 1;
    const auto frame = std::make_unique<std::uint8_t[]>(len);
    if (len != 0) std::memcpy(frame.get(), data + 1, len);

    rowprobe::ParserConfig config;
    config.vlanInKey = (data[0] & 0x80) != 0;
    config.tunnels = kModes[(data[0] >> 4) & 0x3];
    std::array<rowprobe::ParsedPacket, rowprobe::kMaxLayers> layers;
    rowprobe::AnomalyCounters anomalies;
    const rowprobe::RawPacket raw{frame.get(), static_cast<std::uint32_t>(len),
                                  static_cast<std::uint32_t>(len), 0};
    const std::size_t n = rowprobe::parsePacketLayers(raw, link, config, layers, anomalies);

    std::uint64_t skips = 0;
    for (std::size_t a = 0; a < rowprobe::kAnomalyCount; ++a) {
        if (rowprobe::isSkipAnomaly(static_cast<rowprobe::Anomaly>(a))) skips += anomalies.count[a];
    }
    check(skips == (n == 0 ? 1U : 0U));
    check(n <= rowprobe::kMaxLayers);
    check(config.tunnels == rowprobe::TunnelMode::Both || n <= 1);
    for (std::size_t k = 0; k < n; ++k) {
        const rowprobe::ParsedPacket& p = layers[k];
        check(p.key.ipVersion == 4 || p.key.ipVersion == 6);
        check(p.l3Offset <= p.l4Offset && p.l4Offset <= p.payloadOffset);
        check(std::size_t{p.payloadOffset} + p.payloadLen <= len);
        const int c = std::memcmp(p.key.addrA.data(), p.key.addrB.data(), 16);
        check(c < 0 || (c == 0 && p.key.portA <= p.key.portB));
        check(config.vlanInKey || p.key.vlan == 0);
        check(k == 0 || p.l3Offset > layers[k - 1].l3Offset);  // every layer moves forward
    }
    return 0;
}
