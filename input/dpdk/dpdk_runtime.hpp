// The process-wide DPDK state shared by every `dpdk` input: the EAL and the ports.
//
//   -i 'dpdk;eal=...;queues=2;queue=0'   -i 'dpdk;queues=2;queue=1'
//              │                                   │
//              ▼                                   ▼
//   DpdkRuntime::instance()  (one per process, guarded by a mutex; start-up and exit only)
//     eal: initialised once, by the first dpdk input, with that input's `eal` words
//     ports[p]: { configured with N RX queues + mempool, started, claimed queues bitmap }
//
// * The EAL can be initialised only once per process, so the first dpdk input's `eal` string
//   wins; a later input may repeat it or leave it out, but not give a different one.
// * A port is configured and started when its first queue is claimed, with every RX queue
//   (`queues`), RSS over a symmetric Toeplitz key (0x6d5a repeated: both directions of a
//   flow hash alike and land on one queue) when the device supports RSS, and one mempool for
//   all its queues. Every later claim must agree on `queues`; each queue is claimed once.
// * Releasing the last queue of a port stops it (mbufs are back in the pool by then); a
//   later claim restarts it, reconfiguring when the geometry changed. The EAL is cleaned up
//   when the runtime is destroyed at process exit.
// * rte_eal_init pins the calling thread to the main lcore; the runtime restores the
//   caller's CPU affinity so the threads rowprobe creates afterwards are not all pinned to
//   one core. The input threads are not EAL lcores: each registers itself
//   (rte_thread_register) on its first read to get an lcore id and thus a mempool cache.
// * Nothing here runs on the packet path: inputs keep the port/queue ids and the mempool
//   pointer, and read the rte_mbuf timestamp field at the offset found here.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

struct rte_mempool;

namespace rowprobe {
class Options;
}

namespace rowprobe::input {

/// How packets get their time stamps.
enum class DpdkTimestamp : std::uint8_t {
    System,  ///< wall clock, read once per burst
    NicUs,   ///< the mbuf RX time stamp field, microseconds since the epoch (net_pcap)
    NicNs,   ///< the mbuf RX time stamp field, nanoseconds since the epoch
};

/// The RSS key that makes Toeplitz hashing symmetric (Woo & Park, "Scalable TCP Session
/// Monitoring with Symmetric Receive-side Scaling", 2012): 0x6d5a repeated to `length` bytes.
/// Swapping source and destination address and port leaves the hash unchanged, so both
/// directions of a flow reach the same queue.
std::vector<std::uint8_t> symmetricRssKey(std::size_t length);

/// What one input asks of its port; the first claim of a port decides its set-up.
struct DpdkPortRequest {
    std::uint16_t port = 0;
    std::uint16_t queue = 0;
    std::uint16_t queues = 1;
    std::uint16_t rxDesc = 1024;
    std::uint32_t mempool = 0;  ///< mbufs; 0 = sized from queues and rxDesc
    bool promisc = true;
    bool nicTimestamps = false;  ///< enable the RX time stamp offload when the device has it
};

/// What an input needs to read its queue.
struct DpdkQueueInfo {
    std::string driver;        ///< e.g. "net_pcap", "net_ice"
    int timestampOffset = -1;  ///< mbuf dynamic field offset, -1 when not registered
    std::uint64_t timestampFlag = 0;
    bool rss = false;  ///< RSS spreads flows over the queues
};

class DpdkRuntime {
public:
    /// The runtime of this process (function-local static; destroyed at exit).
    static DpdkRuntime& instance();

    /// Initialises the EAL with `ealArgs` (split on blanks) on the first call. Later calls
    /// accept the same string or an empty one. Throws ConfigError on option `eal`.
    void initEal(const std::string& ealArgs, const Options& options);

    /// Claims RX queue `request.queue` of `request.port`, configuring and starting the port
    /// on its first claim. Throws ConfigError naming the option at fault (port, queue,
    /// queues, mempool) or RuntimeError with DPDK's reason.
    DpdkQueueInfo claim(const DpdkPortRequest& request, const Options& options);

    /// Gives the queue back; the port stops when its last queue is released.
    void release(std::uint16_t port, std::uint16_t queue) noexcept;

    /// The least a port needs so that no queue starves: per queue every RX descriptor filled,
    /// the mbufs parked in the core's packet blocks (32 x 64), one burst and a full lcore
    /// cache (384).
    static std::uint32_t minimumMempool(std::uint16_t queues, std::uint16_t rxDesc) noexcept;
    /// Number of mbufs a port is given when `mempool` is not set: the minimum plus 1024 per
    /// queue, rounded up to 2^k - 1 (the size rte_mempool handles best), at least 8191.
    static std::uint32_t defaultMempool(std::uint16_t queues, std::uint16_t rxDesc) noexcept;

    DpdkRuntime(const DpdkRuntime&) = delete;
    DpdkRuntime& operator=(const DpdkRuntime&) = delete;

private:
    struct Port {
        std::uint16_t queues = 0;
        std::uint16_t rxDesc = 0;
        std::uint32_t mempoolSize = 0;
        bool promisc = true;
        bool nicTimestamps = false;
        rte_mempool* pool = nullptr;
        bool configured = false;
        bool started = false;
        std::vector<bool> claimed;
        DpdkQueueInfo info;
    };

    DpdkRuntime() = default;
    ~DpdkRuntime();
    void configure(std::uint16_t id, Port& port, const Options& options);

    std::mutex m_mutex;
    bool m_ealDone = false;
    bool m_ealFailed = false;
    std::string m_ealArgs;
    std::vector<std::string> m_ealWords;  ///< argv storage; the EAL may keep pointers into it
    std::map<std::uint16_t, Port> m_ports;
    unsigned m_poolGeneration = 0;
};

}  // namespace rowprobe::input
