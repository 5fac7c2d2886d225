// Input plugin `dpdk`: one RX queue of a DPDK port, read with rte_eth_rx_burst, zero-copy.
//
//   read(block):  1. free the mbufs this same PacketBlock carried last time (the worker is
//                    done with them: the block came back through the core's free ring)
//                 2. rx_burst up to 64 mbufs into the block's side-table entry
//                 3. block.packets[i] points into mbuf i's data room: no copy
//
// * Zero-copy without a "block returned" callback: the core recycles a fixed pool of
//   PacketBlocks and hands each back to read() only after its worker has finished with it.
//   The input keeps, per PacketBlock address, the mbufs it last put there (m_attached, one
//   entry per block of the pool, found by a linear scan of <= 32 pointers per read) and
//   frees them in bulk when that block is read into again, or when the input is destroyed.
//   The port's mempool is sized for it: per queue the RX ring plus 32 x 64 parked mbufs.
// * A frame longer than one mbuf (2 KiB data room; scattered RX) is delivered as its first
//   segment: capLen = first segment, wireLen = whole frame, like a capture snap length.
// * Time stamps: `system` reads the wall clock once per burst; `nic-us` / `nic-ns` read the
//   mbuf RX time stamp field, which net_pcap fills from the capture file (microseconds in
//   DPDK 22.11), so flows from `dpdk` on a pcap vdev match flows from `pcap` on the file.
// * Idle: rx_burst is polled (pause instructions first, then 10 us sleeps after 100 us
//   without packets, so an idle probe does not burn a shared core); Timeout after `timeout`
//   idle, End after `idle-end` idle (for vdevs that replay a file once). Timeout makes the
//   worker expire flows on wall time, so it is reported only with `system` time stamps: a
//   NIC or file clock (net_pcap replays 2011 captures) must not be mixed with wall time.
// * Threads: read() on the input thread, which registers as a DPDK lcore on its first call
//   so the mempool's per-lcore cache serves both rx_burst refills and our bulk frees.
//   stop() is an atomic flag; stats() reads rte_eth_stats and atomics.
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_pause.h>

#include <array>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "dpdk_runtime.hpp"
#include "rowprobe/errors.hpp"
#include "rowprobe/options.hpp"
#include "rowprobe/plugin.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::input {

namespace {

constexpr std::string_view kTimestampChoices[] = {"auto", "system", "nic-us", "nic-ns"};

constexpr OptionSpec kOptions[] = {
    {.name = "eal",
     .shortName = "e",
     .type = OptionType::String,
     .help = "EAL arguments, split on blanks (first dpdk input of the process only)"},
    {.name = "port",
     .shortName = "p",
     .type = OptionType::Int,
     .defaultValue = "0",
     .help = "DPDK port id",
     .min = 0,
     .max = RTE_MAX_ETHPORTS - 1},
    {.name = "queue",
     .shortName = "q",
     .type = OptionType::Int,
     .defaultValue = "0",
     .help = "RX queue this input reads",
     .min = 0,
     .max = 1023},
    {.name = "queues",
     .shortName = "Q",
     .type = OptionType::Int,
     .defaultValue = "1",
     .help = "RX queues of the port (one dpdk input per queue, same value in each)",
     .min = 1,
     .max = 1024},
    {.name = "burst",
     .shortName = "b",
     .type = OptionType::Int,
     .defaultValue = "64",
     .help = "packets asked of rte_eth_rx_burst per call",
     .min = 1,
     .max = 64},
    {.name = "rx-desc",
     .shortName = "d",
     .type = OptionType::Int,
     .defaultValue = "1024",
     .help = "RX descriptors per queue",
     .min = 32,
     .max = 32768},
    {.name = "mempool",
     .shortName = "m",
     .type = OptionType::Int,
     .help = "mbufs in the port's pool, at least queues x (rx-desc + 2496) "
             "(default: that + 1024 per queue, as 2^k-1, >= 8191)",
     .min = 1023,
     .max = 1 << 26},
    {.name = "promisc",
     .shortName = "P",
     .type = OptionType::Flag,
     .defaultValue = "true",
     .help = "enable promiscuous mode on the port"},
    {.name = "timestamp",
     .shortName = "T",
     .type = OptionType::Choice,
     .defaultValue = "auto",
     .help = "packet time: wall clock per burst, or the mbuf RX time stamp in us / ns "
             "(auto: nic-us on net_pcap, else system)",
     .choices = kTimestampChoices},
    {.name = "timeout",
     .shortName = "t",
     .type = OptionType::Duration,
     .defaultValue = "100ms",
     .help = "report an idle queue after this long without packets (system time stamps)",
     .min = 0.001,
     .max = 60},
    {.name = "idle-end",
     .shortName = "E",
     .type = OptionType::Duration,
     .help = "end the input after this long without packets (off by default; for vdevs)",
     .min = 0.001,
     .max = 86400},
};

TimeNs wallNowNs() noexcept {
    return static_cast<TimeNs>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

}  // namespace

class DpdkInput final : public InputPlugin {
public:
    explicit DpdkInput(const Options& options);
    ~DpdkInput() override;
    DpdkInput(const DpdkInput&) = delete;
    DpdkInput& operator=(const DpdkInput&) = delete;

    Status read(PacketBlock& block) override;
    void stop() noexcept override { m_stopping.store(true, std::memory_order_relaxed); }
    InputStats stats() const override;
    /// Live only when packet time is wall time: the worker then expires flows on wall time.
    bool live() const noexcept override { return m_timestamps == DpdkTimestamp::System; }

private:
    /// The mbufs a PacketBlock points into, freed when that block is read into again.
    struct Attached {
        const PacketBlock* block = nullptr;
        std::uint16_t count = 0;
        std::array<rte_mbuf*, kMaxBatch> mbufs{};
    };
    Attached& attachedTo(const PacketBlock* block);
    TimeNs stampOf(const rte_mbuf* m, TimeNs& burstWall) const noexcept;

    std::uint16_t m_port = 0;
    std::uint16_t m_queue = 0;
    std::uint16_t m_burst = 64;
    DpdkTimestamp m_timestamps = DpdkTimestamp::System;
    int m_tsOffset = -1;
    std::uint64_t m_tsFlag = 0;
    std::chrono::nanoseconds m_timeout{};
    std::chrono::nanoseconds m_idleEnd{};  ///< zero = never
    bool m_claimed = false;
    bool m_threadRegistered = false;
    std::chrono::steady_clock::time_point m_lastPacket{};
    std::chrono::steady_clock::time_point m_lastReport{};
    std::vector<Attached> m_attached;
    std::atomic<bool> m_stopping{false};
    std::atomic<std::uint64_t> m_received{0};
};

DpdkInput::DpdkInput(const Options& options) {
    const auto queues = static_cast<std::uint16_t>(options.getInt("queues"));
    const auto queue = static_cast<std::uint16_t>(options.getInt("queue"));
    if (queue >= queues) {
        options.fail("queue", "must be below queues (" + std::to_string(queues) + "), got " +
                                  std::to_string(queue));
    }
    const auto rxDesc = static_cast<std::uint16_t>(options.getInt("rx-desc"));
    const std::uint32_t minPool = DpdkRuntime::minimumMempool(queues, rxDesc);
    if (options.has("mempool") && options.getInt("mempool") < minPool) {
        options.fail("mempool", "must be at least " + std::to_string(minPool) + " mbufs for " +
                                    std::to_string(queues) + " queue(s): per queue rx-desc (" +
                                    std::to_string(rxDesc) +
                                    ") + 2048 parked in packet blocks + 64 + "
                                    "384 cached, got " +
                                    options.getString("mempool"));
    }
    m_port = static_cast<std::uint16_t>(options.getInt("port"));
    m_queue = queue;
    m_burst = static_cast<std::uint16_t>(options.getInt("burst"));
    m_timeout = std::chrono::nanoseconds(options.getDurationNs("timeout"));
    if (options.has("idle-end"))
        m_idleEnd = std::chrono::nanoseconds(options.getDurationNs("idle-end"));
    const std::string ts = options.getString("timestamp");

    DpdkRuntime& runtime = DpdkRuntime::instance();
    runtime.initEal(options.getString("eal"), options);
    DpdkPortRequest request;
    request.port = m_port;
    request.queue = m_queue;
    request.queues = queues;
    request.rxDesc = rxDesc;
    request.mempool =
        options.has("mempool") ? static_cast<std::uint32_t>(options.getInt("mempool")) : 0;
    request.promisc = options.getFlag("promisc");
    request.nicTimestamps = ts != "system";
    const DpdkQueueInfo info = runtime.claim(request, options);

    if (ts == "nic-us" || (ts == "auto" && info.driver == "net_pcap")) {
        m_timestamps = DpdkTimestamp::NicUs;
    } else if (ts == "nic-ns") {
        m_timestamps = DpdkTimestamp::NicNs;
    }
    if (m_timestamps != DpdkTimestamp::System && info.timestampOffset < 0) {
        runtime.release(m_port, m_queue);  // the destructor does not run for a throwing constructor
        options.fail("timestamp", "the mbuf RX time stamp field is not available on port " +
                                      std::to_string(m_port) + " (" + info.driver +
                                      "); use timestamp=system");
    }
    m_claimed = true;
    m_tsOffset = info.timestampOffset;
    m_tsFlag = info.timestampFlag;
    m_attached.reserve(64);
    m_lastPacket = m_lastReport = std::chrono::steady_clock::now();
}

DpdkInput::~DpdkInput() {
    for (Attached& a : m_attached) {
        if (a.count != 0) rte_pktmbuf_free_bulk(a.mbufs.data(), a.count);
    }
    if (m_claimed) DpdkRuntime::instance().release(m_port, m_queue);
}

DpdkInput::Attached& DpdkInput::attachedTo(const PacketBlock* block) {
    for (Attached& a : m_attached) {
        if (a.block == block) return a;
    }
    m_attached.push_back(Attached{block});  // once per block of the core's pool
    return m_attached.back();
}

TimeNs DpdkInput::stampOf(const rte_mbuf* m, TimeNs& burstWall) const noexcept {
    if (m_timestamps != DpdkTimestamp::System && (m->ol_flags & m_tsFlag) != 0) {
        const auto v = *RTE_MBUF_DYNFIELD(m, m_tsOffset, const rte_mbuf_timestamp_t*);
        return m_timestamps == DpdkTimestamp::NicUs ? v * 1000 : v;
    }
    if (burstWall == 0) burstWall = wallNowNs();
    return burstWall;
}

InputPlugin::Status DpdkInput::read(PacketBlock& block) {
    if (!m_threadRegistered) {
        // An lcore id gives this thread a mempool cache; without one DPDK still works.
        if (rte_lcore_id() == LCORE_ID_ANY) rte_thread_register();
        m_threadRegistered = true;
    }
    Attached& att = attachedTo(&block);
    if (att.count != 0) {
        rte_pktmbuf_free_bulk(att.mbufs.data(), att.count);
        att.count = 0;
    }
    block.link = LinkType::Ethernet;

    for (unsigned idlePolls = 0;; ++idlePolls) {
        if (m_stopping.load(std::memory_order_relaxed)) return Status::End;
        std::uint16_t n = 0;
        while (n < kMaxBatch) {
            const auto want =
                static_cast<std::uint16_t>(std::min<std::size_t>(m_burst, kMaxBatch - n));
            const std::uint16_t got = rte_eth_rx_burst(m_port, m_queue, att.mbufs.data() + n, want);
            n = static_cast<std::uint16_t>(n + got);
            if (got < want) break;
        }
        if (n > 0) {
            TimeNs burstWall = 0;
            for (std::uint16_t i = 0; i < n; ++i) {
                const rte_mbuf* m = att.mbufs[i];
                block.packets[i] = RawPacket{rte_pktmbuf_mtod(m, const std::uint8_t*), m->data_len,
                                             m->pkt_len, stampOf(m, burstWall)};
            }
            block.count = n;
            att.count = n;
            m_received.fetch_add(n, std::memory_order_relaxed);
            m_lastPacket = m_lastReport = std::chrono::steady_clock::now();
            return Status::Ok;
        }
        if (idlePolls < 64) {
            rte_pause();
            continue;
        }
        const auto now = std::chrono::steady_clock::now();
        if (m_idleEnd.count() != 0 && now - m_lastPacket >= m_idleEnd) return Status::End;
        if (m_timestamps == DpdkTimestamp::System && now - m_lastReport >= m_timeout) {
            m_lastReport = now;
            return Status::Timeout;
        }
        if (now - m_lastPacket < std::chrono::microseconds(100)) {
            rte_pause();
        } else {
            std::this_thread::sleep_for(std::chrono::microseconds(10));
        }
    }
}

InputStats DpdkInput::stats() const {
    InputStats s;
    s.received = m_received.load(std::memory_order_relaxed);
    // Drop counters are per port: reported once, by the input of queue 0.
    rte_eth_stats st{};
    if (m_queue == 0 && rte_eth_stats_get(m_port, &st) == 0) {
        s.kernelDrops = st.imissed + st.rx_nombuf;
        s.ifaceDrops = st.ierrors;
    }
    return s;
}

ROWPROBE_REGISTER_PLUGIN(
    PluginKind::Input, DpdkInput,
    {.name = "dpdk",
     .summary = "DPDK port RX queue, zero-copy, symmetric RSS over several queues",
     .options = kOptions});

}  // namespace rowprobe::input
