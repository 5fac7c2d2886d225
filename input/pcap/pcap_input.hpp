// The `pcap` input: packets from a pcap / pcapng file or a live interface through libpcap.
//
//   libpcap buffer ──pcap_next_ex──▶ copy into PacketBlock arena (≤ 64 frames) ──▶ worker
//   classic pcap file, no filter: mmap ──pointers into the mapping (no copy)──▶ worker
//
// * Threads: `read` runs on one thread only: the queue's input thread, or for a regular file
//   (`neverBlocks`) the queue's worker itself. `stop` and `stats` may be called from any thread:
//   `stop` sets an atomic flag and signals an eventfd that a waiting live read polls together
//   with the capture descriptor; `stats` reads atomics the reading thread refreshes.
// * Live reads: the capture is non-blocking; `read` drains what libpcap has and, only when it
//   has nothing, polls once for up to `timeout`. So a read returns Ok as soon as packets are
//   there, Timeout after `timeout` on an idle link, End within microseconds of `stop`.
// * Copying: libpcap reuses its buffer on the next pcap_next_ex, so every frame is copied into
//   the block's arena. When the arena is full, the frame in hand stays valid (libpcap keeps it
//   until the next call) and opens the next block; nothing is dropped or allocated.
// * Costs: one pcap_next_ex and one memcpy per packet; one relaxed atomic add per block; a
//   pcap_stats system call at most every 100 ms on live captures.
#pragma once

#include <pcap/pcap.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "mapped_pcap.hpp"
#include "rowprobe/options.hpp"
#include "rowprobe/plugin.hpp"

namespace rowprobe::input {

class PcapInput final : public InputPlugin {
public:
    /// Opens the file or activates the interface, compiles and installs the filter. Throws
    /// ConfigError (naming `file`, `ifc`, `filter` ...) for every start-up failure.
    explicit PcapInput(const Options& options);
    ~PcapInput() override;
    PcapInput(const PcapInput&) = delete;
    PcapInput& operator=(const PcapInput&) = delete;

    Status read(PacketBlock& block) override;
    void stop() noexcept override;
    InputStats stats() const override;
    bool live() const noexcept override { return m_live; }
    bool neverBlocks() const noexcept override { return m_regularFile; }
    /// Live capture: the interface's index ("any" and pseudo devices have none: 0).
    std::uint32_t interfaceIndex() const noexcept override { return m_ifindex; }

    /// Link type of every block this input delivers.
    LinkType linkType() const noexcept { return m_link; }

private:
    void openFile(const Options& options);
    void openLive(const Options& options);
    void checkLinkType(const Options& options);
    void installFilter(const Options& options);
    void refreshKernelStats() noexcept;
    /// Live: waits up to the read timeout for the capture or a stop; false on timeout or stop.
    bool waitReadable() noexcept;
    /// Offline fast path: frames straight from the memory-mapped file (mapped_pcap.hpp).
    Status readMapped(PacketBlock& block);

    pcap_t* m_handle = nullptr;
    std::unique_ptr<MappedPcap> m_mapped;  ///< set for plain pcap files read without a filter
    std::string m_source;                  ///< file name or interface, for error messages
    std::string m_error;  ///< a read error, thrown once the packets before it are delivered
    LinkType m_link = LinkType::Ethernet;
    bool m_live = false;
    std::uint32_t m_ifindex = 0;
    bool m_regularFile = false;  ///< offline from a regular file: reads never wait (no FIFO)
    bool m_nanoTs = true;        ///< libpcap delivers tv_usec in nanoseconds
    bool m_ended = false;
    std::uint32_t m_snaplen = 65535;
    // A frame pcap_next_ex returned that did not fit into the previous block.
    const std::uint8_t* m_pendingData = nullptr;
    pcap_pkthdr m_pendingHeader{};
    std::uint64_t m_nextStatsNs = 0;  ///< monotonic time of the next pcap_stats (live only)
    int m_timeoutMs = 100;
    int m_pcapFd = -1;  ///< live: libpcap's selectable descriptor
    int m_wakeFd = -1;  ///< live: eventfd signalled by stop()

    std::atomic<bool> m_stopRequested{false};
    std::atomic<std::uint64_t> m_received{0};
    std::atomic<std::uint64_t> m_kernelDrops{0};
    std::atomic<std::uint64_t> m_ifaceDrops{0};
};

}  // namespace rowprobe::input
