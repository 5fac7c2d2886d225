// The `gen` input: synthetic Ethernet frames generated in memory at full speed, for benchmarks
// and stress tests, from the traffic model shared with rowprobe-tracegen (traffic_model.hpp).
//
//   TrafficModel::next ──GenPacket──▶ writeFrame straight into the PacketBlock arena ──▶ worker
//
// * Threads: `read` runs on one thread: the queue's input thread, or the queue's worker (the
//   input never blocks, `neverBlocks`; --input-thread decides); `stop` and `stats` may be called
//   from any thread (one atomic flag, one atomic counter updated once per block).
// * No allocation after construction: frames are written in place into the block's arena, 64-byte
//   aligned like PacketBlock::append; a block holds at most as many frames as fit the arena at
//   the largest frame length the options allow (64 for frames up to 4 KiB).
// * Time is synthetic (start + k / pps), so the input is not live: timeouts follow packet time.
#include <algorithm>
#include <atomic>
#include <cstdint>

#include "rowprobe/options.hpp"
#include "rowprobe/plugin.hpp"
#include "rowprobe/registry.hpp"
#include "traffic_model.hpp"

namespace rowprobe::input {

namespace {

constexpr std::size_t kFrameAlign = 64;
constexpr std::uint32_t kLongestHeaders = 14 + 40 + 20;  // Ethernet + IPv6 + TCP

std::size_t alignFrame(std::size_t len) noexcept {
    return (len + kFrameAlign - 1) & ~(kFrameAlign - 1);
}

}  // namespace

class GenInput final : public InputPlugin {
public:
    explicit GenInput(const Options& options) : m_model(gen::parseGenConfig(options)) {
        const gen::GenConfig& c = m_model.config();
        const std::uint32_t longest = std::max(c.size, kLongestHeaders);
        const std::uint32_t written = std::min(longest, std::max(c.snaplen, kLongestHeaders));
        m_perBlock = std::min(kMaxBatch, PacketBlock::kArenaBytes / alignFrame(written));
    }

    Status read(PacketBlock& block) override {
        block.link = LinkType::Ethernet;
        if (m_stopRequested.load(std::memory_order_relaxed)) m_ended = true;
        if (m_ended) return Status::End;
        std::size_t n = block.count;
        std::size_t used = block.arenaUsed;
        gen::GenPacket pkt;
        while (n < m_perBlock) {
            if (!m_model.next(pkt)) {
                m_ended = true;
                break;
            }
            std::uint8_t* dst = block.arena.data() + used;
            gen::writeFrame(pkt, dst);
            block.packets[n++] = RawPacket{dst, pkt.capLen, pkt.frameLen, pkt.ts};
            used += alignFrame(pkt.capLen);
        }
        const std::size_t got = n - block.count;
        block.count = n;
        block.arenaUsed = used;
        if (got != 0) m_received.fetch_add(got, std::memory_order_relaxed);
        return got != 0 ? Status::Ok : Status::End;
    }

    void stop() noexcept override { m_stopRequested.store(true, std::memory_order_relaxed); }

    bool neverBlocks() const noexcept override { return true; }

    InputStats stats() const override {
        InputStats s;
        s.received = m_received.load(std::memory_order_relaxed);
        return s;
    }

private:
    gen::TrafficModel m_model;
    std::size_t m_perBlock = kMaxBatch;
    bool m_ended = false;
    std::atomic<bool> m_stopRequested{false};
    std::atomic<std::uint64_t> m_received{0};
};

ROWPROBE_REGISTER_PLUGIN(
    PluginKind::Input, GenInput,
    {.name = "gen",
     .summary = "synthetic traffic generated in memory (deterministic, random, "
                "netscan, portscan, zipf) for benchmarks",
     .options = gen::genOptionSpecs()});

}  // namespace rowprobe::input
