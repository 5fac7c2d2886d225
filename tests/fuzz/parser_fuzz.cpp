// libFuzzer target for the packet parser. The first input byte chooses the link type, the
// rest is the frame, copied into a buffer of exactly its length so ASan sees every overread.
// Besides memory errors it aborts when a successful parse breaks the ParsedPacket invariants.
//
//   cmake -DCMAKE_CXX_COMPILER=clang++ ... && ninja parser_fuzz
//   ./parser_fuzz -max_len=512 -runs=10000000
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "rowprobe/packet.hpp"

namespace {

constexpr rowprobe::LinkType kLinks[] = {rowprobe::LinkType::Ethernet, rowprobe::LinkType::Raw,
                                         rowprobe::LinkType::LinuxSll, rowprobe::LinkType::Null};

void check(bool condition) {
    if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const rowprobe::LinkType link = kLinks[data[0] % 4];
    const std::size_t len = size - 1;
    const auto frame = std::make_unique<std::uint8_t[]>(len);
    if (len != 0) std::memcpy(frame.get(), data + 1, len);

    rowprobe::ParserConfig config;
    config.vlanInKey = (data[0] & 0x80) != 0;
    rowprobe::ParsedPacket p;
    rowprobe::AnomalyCounters anomalies;
    const rowprobe::RawPacket raw{frame.get(), static_cast<std::uint32_t>(len),
                                  static_cast<std::uint32_t>(len), 0};
    const bool ok = rowprobe::parsePacket(raw, link, config, p, anomalies);

    std::uint64_t counted = 0;
    for (const auto c : anomalies.count) counted += c;
    if (!ok) {
        check(counted == 1);
        return 0;
    }
    check(counted == anomalies[rowprobe::Anomaly::TruncatedL4] && counted <= 1);
    check(p.key.ipVersion == 4 || p.key.ipVersion == 6);
    check(p.l3Offset <= p.l4Offset && p.l4Offset <= p.payloadOffset);
    check(std::size_t{p.payloadOffset} + p.payloadLen <= len);
    const int c = std::memcmp(p.key.addrA.data(), p.key.addrB.data(), 16);
    check(c < 0 || (c == 0 && p.key.portA <= p.key.portB));
    check(config.vlanInKey || p.key.vlan == 0);
    return 0;
}
