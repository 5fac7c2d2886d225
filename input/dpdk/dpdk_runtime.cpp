#include "dpdk_runtime.hpp"

#include <pthread.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_mempool.h>
#include <sched.h>

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "rowprobe/errors.hpp"
#include "rowprobe/options.hpp"

namespace rowprobe::input {

namespace {

/// Packets the core can hold per queue: its pool of 32 PacketBlocks (kBlocksPerQueue in
/// core/pipeline.cpp) of 64 mbufs each. The input frees a block's mbufs only when that block
/// comes back, so a pool smaller than this plus the RX ring could park every mbuf in blocks
/// the input is not holding, and the queue would starve.
constexpr std::uint32_t kHeldByCore = 32 * 64;
constexpr std::uint32_t kPoolCache = 256;
/// An lcore's mempool cache may grow to 1.5 x its size before it flushes.
constexpr std::uint32_t kCacheHeld = kPoolCache * 3 / 2;

std::string dpdkError(int err) { return rte_strerror(err < 0 ? -err : err); }

std::vector<std::string> splitWords(const std::string& text) {
    std::vector<std::string> words;
    std::istringstream in(text);
    for (std::string w; in >> w;) words.push_back(w);
    return words;
}

std::vector<std::string> portNames() {
    std::vector<std::string> names;
    for (std::uint16_t id = 0; id < RTE_MAX_ETHPORTS; ++id) {
        if (!rte_eth_dev_is_valid_port(id)) continue;
        char name[RTE_ETH_NAME_MAX_LEN] = {};
        rte_eth_dev_get_name_by_port(id, name);
        names.push_back(std::to_string(id) + " (" + name + ")");
    }
    return names;
}

}  // namespace

std::vector<std::uint8_t> symmetricRssKey(std::size_t length) {
    std::vector<std::uint8_t> key(length);
    for (std::size_t i = 0; i < length; ++i) key[i] = i % 2 == 0 ? 0x6d : 0x5a;
    return key;
}

DpdkRuntime& DpdkRuntime::instance() {
    static DpdkRuntime runtime;
    return runtime;
}

std::uint32_t DpdkRuntime::minimumMempool(std::uint16_t queues, std::uint16_t rxDesc) noexcept {
    return std::uint32_t{queues} * (rxDesc + kHeldByCore + 64U + kCacheHeld);
}

std::uint32_t DpdkRuntime::defaultMempool(std::uint16_t queues, std::uint16_t rxDesc) noexcept {
    const std::uint64_t need = minimumMempool(queues, rxDesc) + std::uint64_t{queues} * 1024;
    std::uint64_t size = 8191;
    while (size < need) size = size * 2 + 1;
    return static_cast<std::uint32_t>(size);
}

void DpdkRuntime::initEal(const std::string& ealArgs, const Options& options) {
    const std::lock_guard lock(m_mutex);
    if (m_ealFailed) {
        options.fail("eal", "an earlier dpdk input failed to initialise the EAL in this process");
    }
    if (m_ealDone) {
        if (!ealArgs.empty() && splitWords(ealArgs) != splitWords(m_ealArgs)) {
            options.fail(
                "eal", "the EAL is initialised once per process, by the first dpdk input, with '" +
                           m_ealArgs + "'; give the same eal= or none");
        }
        return;
    }
    m_ealArgs = ealArgs;
    m_ealWords = splitWords(ealArgs);
    m_ealWords.insert(m_ealWords.begin(), "rowprobe");
    std::vector<char*> argv;
    for (auto& w : m_ealWords) argv.push_back(w.data());
    argv.push_back(nullptr);

    // EAL log lines go to stderr: stdout may carry flow records (-o 'json').
    rte_openlog_stream(stderr);
    cpu_set_t affinity;
    const bool haveAffinity =
        pthread_getaffinity_np(pthread_self(), sizeof affinity, &affinity) == 0;
    const int rc = rte_eal_init(static_cast<int>(argv.size() - 1), argv.data());
    const int err = rte_errno;
    if (haveAffinity) pthread_setaffinity_np(pthread_self(), sizeof affinity, &affinity);
    if (rc < 0) {
        m_ealFailed = true;
        options.fail("eal",
                     "rte_eal_init failed: " + dpdkError(err) +
                         " (see the EAL messages above; e.g. no hugepages: add --no-huge -m 512)");
    }
    m_ealDone = true;
}

void DpdkRuntime::configure(std::uint16_t id, Port& port, const Options& options) {
    rte_eth_dev_info info{};
    int rc = rte_eth_dev_info_get(id, &info);
    if (rc != 0)
        throw RuntimeError(options.component(), "rte_eth_dev_info_get(port " + std::to_string(id) +
                                                    "): " + dpdkError(rc));
    if (port.queues > info.max_rx_queues) {
        options.fail("queues", "port " + std::to_string(id) + " (" + info.driver_name +
                                   ") has at most " + std::to_string(info.max_rx_queues) +
                                   " RX queues, got " + std::to_string(port.queues));
    }

    rte_eth_conf conf{};
    port.info = DpdkQueueInfo{};
    port.info.driver = info.driver_name;
    std::vector<std::uint8_t> key;
    if (port.queues > 1 && info.flow_type_rss_offloads != 0) {
        key = symmetricRssKey(info.hash_key_size != 0 ? info.hash_key_size : 40);
        conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
        conf.rx_adv_conf.rss_conf.rss_key = key.data();
        conf.rx_adv_conf.rss_conf.rss_key_len = static_cast<std::uint8_t>(key.size());
        conf.rx_adv_conf.rss_conf.rss_hf =
            (RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP | RTE_ETH_RSS_SCTP) &
            info.flow_type_rss_offloads;
        port.info.rss = true;
    }
    if (port.nicTimestamps && (info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_TIMESTAMP) != 0) {
        conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_TIMESTAMP;
    }
    if ((info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_SCATTER) != 0) {
        conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_SCATTER;  // long frames: first segment kept
    }
    rc = rte_eth_dev_configure(id, port.queues, 0, &conf);
    if (rc != 0)
        throw RuntimeError(options.component(), "rte_eth_dev_configure(port " + std::to_string(id) +
                                                    "): " + dpdkError(rc));

    std::uint16_t rxDesc = port.rxDesc;
    std::uint16_t txDesc = 0;
    rte_eth_dev_adjust_nb_rx_tx_desc(id, &rxDesc, &txDesc);

    if (port.pool == nullptr || port.pool->size != port.mempoolSize) {
        const std::string name =
            "rowprobe_" + std::to_string(id) + "_" + std::to_string(m_poolGeneration++);
        rte_mempool* pool =
            rte_pktmbuf_pool_create(name.c_str(), port.mempoolSize, kPoolCache, 0,
                                    RTE_MBUF_DEFAULT_BUF_SIZE, rte_eth_dev_socket_id(id));
        if (pool == nullptr) {
            options.fail("mempool", "cannot create a pool of " + std::to_string(port.mempoolSize) +
                                        " mbufs: " + dpdkError(rte_errno) +
                                        " (give the EAL more memory, e.g. -m, or lower mempool)");
        }
        for (std::uint16_t q = 0; q < port.queues; ++q) {
            rc = rte_eth_rx_queue_setup(id, q, rxDesc, rte_eth_dev_socket_id(id), nullptr, pool);
            if (rc != 0) {
                rte_mempool_free(pool);
                throw RuntimeError(options.component(),
                                   "rte_eth_rx_queue_setup(port " + std::to_string(id) +
                                       ", queue " + std::to_string(q) + "): " + dpdkError(rc));
            }
        }
        rte_mempool_free(port.pool);  // the queues now use the new pool
        port.pool = pool;
    } else {
        for (std::uint16_t q = 0; q < port.queues; ++q) {
            rc = rte_eth_rx_queue_setup(id, q, rxDesc, rte_eth_dev_socket_id(id), nullptr,
                                        port.pool);
            if (rc != 0) {
                throw RuntimeError(options.component(),
                                   "rte_eth_rx_queue_setup(port " + std::to_string(id) +
                                       ", queue " + std::to_string(q) + "): " + dpdkError(rc));
            }
        }
    }
    port.configured = true;

    if (port.nicTimestamps) {
        int offset = -1;
        std::uint64_t flag = 0;
        if (rte_mbuf_dyn_rx_timestamp_register(&offset, &flag) == 0) {
            port.info.timestampOffset = offset;
            port.info.timestampFlag = flag;
        }
    }
}

DpdkQueueInfo DpdkRuntime::claim(const DpdkPortRequest& request, const Options& options) {
    const std::lock_guard lock(m_mutex);
    const std::uint16_t id = request.port;
    if (!rte_eth_dev_is_valid_port(id)) {
        const std::vector<std::string> names = portNames();
        std::string problem = "no DPDK port " + std::to_string(id);
        if (names.empty()) {
            problem +=
                ": the EAL found no ports (bind a NIC to vfio-pci, or add --vdev=... to eal=)";
        } else {
            problem += "; ports found by the EAL:";
            for (const auto& n : names) problem += " " + n;
        }
        options.fail("port", problem);
    }
    Port& port = m_ports[id];
    const bool fresh =
        std::none_of(port.claimed.begin(), port.claimed.end(), [](bool b) { return b; });
    const std::uint32_t pool =
        request.mempool != 0 ? request.mempool : defaultMempool(request.queues, request.rxDesc);
    if (!fresh) {
        if (request.queues != port.queues) {
            options.fail("queues", "port " + std::to_string(id) + " is already set up with " +
                                       std::to_string(port.queues) +
                                       " queues by another dpdk input; " +
                                       "every input of a port must give the same queues=, got " +
                                       std::to_string(request.queues));
        }
        if (port.claimed[request.queue]) {
            options.fail("queue", "queue " + std::to_string(request.queue) + " of port " +
                                      std::to_string(id) +
                                      " is already read by another dpdk input");
        }
        port.claimed[request.queue] = true;
        return port.info;
    }
    const bool changed = !port.configured || port.queues != request.queues ||
                         port.rxDesc != request.rxDesc || port.mempoolSize != pool ||
                         port.nicTimestamps != request.nicTimestamps;
    port.queues = request.queues;
    port.rxDesc = request.rxDesc;
    port.mempoolSize = pool;
    port.promisc = request.promisc;
    port.nicTimestamps = request.nicTimestamps;
    if (changed) configure(id, port, options);

    const int rc = rte_eth_dev_start(id);
    if (rc != 0)
        throw RuntimeError(options.component(),
                           "rte_eth_dev_start(port " + std::to_string(id) + "): " + dpdkError(rc));
    port.started = true;
    // Virtual devices may not know promiscuous mode; that is not an error.
    if (port.promisc) {
        rte_eth_promiscuous_enable(id);
    } else {
        rte_eth_promiscuous_disable(id);
    }
    rte_eth_stats_reset(id);
    port.claimed.assign(port.queues, false);
    port.claimed[request.queue] = true;
    return port.info;
}

void DpdkRuntime::release(std::uint16_t id, std::uint16_t queue) noexcept {
    const std::lock_guard lock(m_mutex);
    auto it = m_ports.find(id);
    if (it == m_ports.end() || queue >= it->second.claimed.size()) return;
    Port& port = it->second;
    port.claimed[queue] = false;
    if (port.started &&
        std::none_of(port.claimed.begin(), port.claimed.end(), [](bool b) { return b; })) {
        rte_eth_dev_stop(id);
        port.started = false;
    }
}

DpdkRuntime::~DpdkRuntime() {
    if (!m_ealDone) return;
    for (auto& [id, port] : m_ports) {
        if (port.started) rte_eth_dev_stop(id);
        if (port.configured) rte_eth_dev_close(id);
        rte_mempool_free(port.pool);
    }
    rte_eal_cleanup();
}

}  // namespace rowprobe::input
