// libFuzzer target for the tcpperf TCP analysis fed hostile segment sequences: any order of
// flags, sequence and acknowledgement numbers (absolute, or near what the connection expects,
// across the 2^32 wrap), lengths, windows and times (also stepping back), and the option
// parser on any bytes. Checks the analysis' invariants after every segment.
//
//   ./tcpperf_fuzz -max_len=4096 corpus/tcpperf_fuzz
//
// Input: one byte n, n option bytes (parsed as a SYN's option list), then 12-byte segments:
//   [0] bit 0 direction, bits 1-2 sequence mode, bit 3 ack mode   [1] TCP flags
//   [2..5] value   [6..7] payload length   [8..9] window   [10..11] signed time step (x 64 µs)
#include <cstdint>

#include "fuzz_buffer.hpp"
#include "process/tcpperf/tcpperf_analysis.hpp"

namespace {

using rowprobe::fuzz::check;
using namespace rowprobe::tcpperf;

std::uint32_t be32(const std::uint8_t* p) {
    return static_cast<std::uint32_t>(p[0]) << 24 | static_cast<std::uint32_t>(p[1]) << 16 |
           static_cast<std::uint32_t>(p[2]) << 8 | p[3];
}
std::uint16_t be16(const std::uint8_t* p) { return static_cast<std::uint16_t>(p[0] << 8 | p[1]); }

void checkDir(const TcpPerfFlowDir& h, const TcpPerfRtt& r, const TcpPerfDir& d,
              std::uint64_t packets, std::uint64_t bytes) {
    check(h.rttUsed <= kRttSlots);
    if (r.rttCount != 0) {
        check(r.rttMinUs <= r.rttMaxUs);
        check(rttMeanUs(r) >= r.rttMinUs && rttMeanUs(r) <= r.rttMaxUs);
        check(r.rttMaxUs < 0x8000'0000U);
    } else {
        check(r.rttMinUs == 0 && r.rttMaxUs == 0 && r.rttSumUs == 0);
    }
    check(std::uint64_t{d.retxPkts} + d.oooPkts <= packets);
    check(d.dupAcks <= packets && d.zeroWindows <= packets && r.rttCount <= packets + 1);
    check(d.retxBytes <= bytes);
    const std::uint8_t ws = announcedWindowScale(d);
    check(ws <= 14 || ws == kNoWindowScale);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const rowprobe::fuzz::ExactBuffer buf(data, size);
    const auto in = buf.span();
    if (in.empty()) return 0;
    const std::size_t n = in[0] < in.size() ? in[0] : in.size() - 1;
    std::uint16_t mss = 0;
    std::uint8_t wscale = kNoWindowScale;
    parseTcpOptions(in.subspan(1, n), mss, wscale);

    TcpPerfState s{};
    std::uint64_t t = 1'000'000'000ULL;
    std::uint64_t packets[2] = {0, 0};
    std::uint64_t bytes[2] = {0, 0};
    for (std::size_t i = 1 + n; i + 12 <= in.size(); i += 12) {
        const std::uint8_t* r = in.data() + i;
        TcpSegment seg;
        seg.dir = r[0] & 1U;
        seg.flags = r[1];
        const std::uint32_t value = be32(r + 2);
        const TcpPerfFlowDir& self = s.flow[seg.dir];
        const TcpPerfFlowDir& peer = s.flow[seg.dir ^ 1U];
        switch ((r[0] >> 1) & 3U) {
            case 0:
                seg.seq = value;
                break;
            case 1:
                seg.seq = self.nextSeq + static_cast<std::int16_t>(value);
                break;
            case 2:
                seg.seq = peer.lastAck - (value & 0xFFFF);
                break;
            default:
                seg.seq = self.nextSeq - 1;
                break;
        }
        seg.ack = (r[0] & 8U) != 0 ? peer.nextSeq - (value >> 16 & 0xFF) : value;
        seg.len = be16(r + 6) % 3000;
        seg.window = be16(r + 8);
        if ((seg.flags & kSyn) != 0) {
            seg.mss = mss;
            seg.wscale = wscale;
        }
        t += static_cast<std::uint64_t>(
            static_cast<std::int64_t>(static_cast<std::int16_t>(be16(r + 10))) * 64'000);
        seg.tsNs = t;
        const SegmentVerdict v = tcpperfUpdate(s, seg);
        ++packets[seg.dir];
        bytes[seg.dir] += seg.len;
        check(!v.rttSample || v.rttUs < 0x8000'0000U);
        check(static_cast<unsigned>(v.cls) <= static_cast<unsigned>(SegmentClass::OutOfOrder));
        checkDir(s.flow[0], s.rtt[0], s.dir[0], packets[0], bytes[0]);
        checkDir(s.flow[1], s.rtt[1], s.dir[1], packets[1], bytes[1]);
    }
    return 0;
}
