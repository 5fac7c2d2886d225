// The `pcap` input: packets from a pcap / pcapng file (gzip'd or not, a pipe or FIFO too) or a
// live interface through libpcap.
//
//   live: libpcap buffer ──pcap_next_ex──▶ copy into PacketBlock arena (≤ 64 frames) ──▶ worker
//   file, pipe, gzip (map=off, or map=auto's read()): PcapStream chunks ──pointers──▶ worker
//   regular file, map=on, or map=auto where measured cheaper (the default; read_method.hpp):
//                PcapStream memory map ──pointers into its pages (no copy)──▶ worker
//                (pcap_stream.hpp; a BPF filter runs on those records: pcap_offline_filter)
//
// * Files and pipes: a block ends at 64 packets, at the reader's byte budget, where a pcapng
//   interface of another link type begins (that packet opens the next block), or, on a pipe,
//   when no record arrived within 20 ms (partial blocks). Never Timeout: an idle pipe keeps
//   the read waiting, polling stop() every 50 ms.
// * Threads: `read` runs on one thread only: the queue's input thread, or for a regular file
//   (`neverBlocks`) the queue's worker itself. `stop` and `stats` may be called from any thread:
//   `stop` sets an atomic flag and signals an eventfd that a waiting live read polls together
//   with the capture descriptor; `stats` reads atomics the reading thread refreshes.
// * Live reads: the capture is non-blocking; `read` drains what libpcap has and, only when it
//   has nothing, polls once for up to `timeout`. So a read returns Ok as soon as packets are
//   there, Timeout after `timeout` on an idle link. After `stop` (the core reads on until End)
//   it hands over what libpcap's ring held at the request: the blocks already retired, then,
//   polling for up to min(timeout, 250 ms) + 50 ms, the block the kernel was filling (retired
//   by its timer); packets that keep arriving are read for at most 800 ms in all.
// * Copying (live): libpcap reuses its buffer on the next pcap_next_ex, so every frame is copied into
//   the block's arena. When the arena is full, the frame in hand stays valid (libpcap keeps it
//   until the next call) and opens the next block; nothing is dropped or allocated.
// * Files: `verbose` prints at start-up how the file is read and why (map=auto's measured
//   costs), one line on stderr.
// * Costs: one pcap_next_ex and one memcpy per packet; one relaxed atomic add per block; a
//   pcap_stats system call at most every 100 ms on live captures.
#pragma once

#include <pcap/pcap.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "pcap_stream.hpp"
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
    /// Live: waits up to the read timeout for the capture or a stop; false on timeout. After a
    /// stop it starts the drain and returns true (the drain decides when the input ends).
    bool waitReadable() noexcept;
    /// Live, the first look at a stop request: the drain's deadlines.
    void beginDrain() noexcept;
    /// Classic pcap files and pipes, gzip'd or not: frames straight from the read buffers.
    Status readStream(PacketBlock& block);
    /// At the end of a classic pcap stream: one warning per kind of anomaly it counted.
    void warnAnomalies() noexcept;
    /// The filter for a link type (pcapng interfaces may differ), compiled on first use.
    const bpf_program* filterFor(std::uint32_t dlt);

    pcap_t* m_handle = nullptr;
    std::unique_ptr<PcapStream> m_stream;         ///< classic pcap (any file, pipe, gzip)
    std::unique_ptr<ByteSource> m_libpcapSource;  ///< what libpcap reads when it is no capture
    bpf_program m_filter{};  ///< the filter for the file's first link type, on m_stream's records
    std::string m_filterText;
    std::vector<std::pair<std::uint32_t, bpf_program>> m_otherFilters;  ///< pcapng: other types
    std::uint32_t m_streamDlt = 0;  ///< link type of the last packet read
    LinkType m_streamLink = LinkType::Ethernet;
    RawPacket m_pending{};  ///< read, but of another link type than the block it was read for
    LinkType m_pendingLink = LinkType::Ethernet;
    bool m_hasPending = false;
    std::uint64_t m_unsupportedLink = 0;  ///< packets skipped: their interface's link type
    bool m_warned = false;
    std::string m_source;  ///< file name or interface, for error messages
    std::string m_error;   ///< a read error, thrown once the packets before it are delivered
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
    int m_pcapFd = -1;                ///< live: libpcap's selectable descriptor
    int m_wakeFd = -1;                ///< live: eventfd signalled by stop()
    bool m_draining = false;          ///< live: stopped, handing over what the ring held
    std::uint64_t m_drainWaitNs = 0;  ///< monotonic: an empty ring ends the drain after this
    std::uint64_t m_drainEndNs = 0;   ///< monotonic: the drain ends here in any case

    std::atomic<bool> m_stopRequested{false};
    std::atomic<std::uint64_t> m_received{0};
    std::atomic<std::uint64_t> m_kernelDrops{0};
    std::atomic<std::uint64_t> m_ifaceDrops{0};
};

}  // namespace rowprobe::input
