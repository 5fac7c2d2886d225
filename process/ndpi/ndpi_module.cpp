#include "process/ndpi/ndpi_module.hpp"

#include <netinet/in.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "rowprobe/byte_order.hpp"
#include "rowprobe/errors.hpp"

namespace rowprobe::ndpi {

namespace {

constexpr std::size_t kIpv4Header = 20;
constexpr std::size_t kIpv6Header = 40;

[[noreturn]] void refuse(std::string_view option, const std::string& path, std::string problem) {
    throw ConfigError({.component = "process 'ndpi'",
                       .option = std::string(option),
                       .value = path,
                       .problem = std::move(problem),
                       .help = "rowprobe -h ndpi"});
}

/// A configuration file must exist and be readable before nDPI sees it: nDPI 4.2 reports a
/// missing file only as a return value, and some of its loaders say nothing at all.
void checkReadable(std::string_view option, const std::string& path) {
    std::ifstream in(path);
    if (!in) refuse(option, path, std::string("cannot read the file: ") + std::strerror(errno));
}

/// Where nDPI 4.2 finds the layer 4 of an IPv6 packet (ndpi_handle_ipv6_extension_headers): it
/// steps over hop-by-hop (0), routing (43), fragment (44), destination options (60) and
/// mobility (135) headers, and finds none after a no-next-header (59) or a non-first fragment.
/// Not the SDK parser's walk: what nDPI will read is decided by nDPI's own rules and quirks.
bool ipv6Transport(std::span<const std::uint8_t> ip, std::uint8_t& protocol,
                   std::span<const std::uint8_t>& l4) noexcept {
    std::size_t l3 = ip.size() - kIpv6Header;
    std::size_t at = kIpv6Header;
    std::size_t len = loadBe16(ip.data() + 4);
    protocol = ip[6];
    const auto extension = [](std::uint8_t p) {
        return p == 0 || p == 43 || p == 44 || p == 60 || p == 135 || p == 59;
    };
    while (l3 > 1 && extension(protocol)) {
        if (protocol == 59) return false;
        if (protocol == 44) {
            if (len < 8 || l3 < 5) return false;
            l3 -= 5;  // nDPI 4.2's own count for this header, kept so the walk ends where its does
            protocol = ip[at];
            if ((loadBe16(ip.data() + at + 2) >> 3) != 0) return false;
            len -= 8;
            at += 8;
            continue;
        }
        if (len < 2) return false;
        const std::size_t size = ip[at + 1] * std::size_t{8} + 8;
        if (size > l3 || size > len) return false;
        l3 -= size;
        protocol = ip[at];
        len -= size;
        at += size;
    }
    l4 = ip.subspan(at, len);
    return true;
}

/// The layer-4 protocol nDPI 4.2 finds in `ip` (ndpi_init_packet), or kNoTransport; false when
/// it is TCP or UDP and its header is not whole.
bool ndpiTransport(std::span<const std::uint8_t> ip, std::uint16_t& transport) noexcept {
    transport = kNoTransport;
    std::uint8_t protocol = 0;
    std::span<const std::uint8_t> l4;
    if (ip[0] >> 4 == 4) {
        const std::size_t header = (ip[0] & 0x0F) * 4U;
        const std::size_t total = loadBe16(ip.data() + 2);
        if (header < kIpv4Header || total < header) return true;
        protocol = ip[9];
        l4 = ip.subspan(header, total - header);
    } else if (!ipv6Transport(ip, protocol, l4)) {
        return true;
    }
    transport = protocol;
    if (protocol == IPPROTO_TCP) return l4.size() >= 20 && l4.size() >= (l4[12] >> 4) * 4U;
    if (protocol == IPPROTO_UDP) return l4.size() >= 8;
    return true;
}

}  // namespace

Skip ipPacketForNdpi(std::span<const std::uint8_t> ip, std::uint16_t fragOffset,
                     NdpiPacket& out) noexcept {
    if (ip.empty()) return Skip::NotIp;
    const unsigned version = ip[0] >> 4;
    std::size_t total = 0;
    if (version == 4) {
        if (ip.size() < kIpv4Header) return Skip::Truncated;
        if (fragOffset != 0) return Skip::Fragment;
        total = loadBe16(ip.data() + 2);
        if ((ip[0] & 0x0F) * 4U > ip.size()) return Skip::Truncated;
    } else if (version == 6) {
        if (ip.size() < kIpv6Header) return Skip::Truncated;
        total = kIpv6Header + loadBe16(ip.data() + 4);
    } else {
        return Skip::NotIp;
    }
    if (ip.size() < total) return Skip::Truncated;
    // ndpiReader gives nDPI the capture from the IP header on (Ethernet padding included) as a
    // 16-bit length; nDPI reads the lengths in the headers.
    const auto given = ip.first(std::min<std::size_t>(ip.size(), 0xFFFF));
    if (!ndpiTransport(given, out.transport)) return Skip::CutTransport;
    out.ip = given;
    return Skip::None;
}

void checkConfigFiles(const ModuleConfig& config) {
    const std::pair<std::string_view, const std::string*> files[] = {
        {"protos", &config.protos},
        {"categories", &config.categories},
        {"risky-domains", &config.riskyDomains},
        {"ja3", &config.ja3},
        {"sha1", &config.sha1}};
    for (const auto& [option, path] : files)
        if (!path->empty()) checkReadable(option, *path);
}

DetectionModule::DetectionModule(const ModuleConfig& config) {
    installHeapHooks();
    checkConfigFiles(config);

    HeapScope scope(m_heap.module);
    m_module = ndpi_init_detection_module(ndpi_no_prefs);
    if (m_module == nullptr) {
        throw ConfigError({.component = "process 'ndpi'",
                           .problem = "nDPI could not make a detection module (out of memory?)"});
    }
    NDPI_PROTOCOL_BITMASK all;
    NDPI_BITMASK_SET_ALL(all);
    ndpi_set_protocol_detection_bitmask2(m_module, &all);
    try {
        if (!config.protos.empty() && ndpi_load_protocols_file(m_module, config.protos.c_str()) < 0)
            refuse("protos", config.protos, "nDPI refused the protocols file");
        if (!config.categories.empty() &&
            ndpi_load_categories_file(m_module, config.categories.c_str()) < 0)
            refuse("categories", config.categories, "nDPI refused the categories file");
        if (!config.riskyDomains.empty() &&
            ndpi_load_risk_domain_file(m_module, config.riskyDomains.c_str()) < 0)
            refuse("risky-domains", config.riskyDomains, "nDPI refused the risky domains file");
        if (!config.ja3.empty() && ndpi_load_malicious_ja3_file(m_module, config.ja3.c_str()) < 0)
            refuse("ja3", config.ja3, "nDPI refused the JA3 fingerprints file");
        if (!config.sha1.empty() &&
            ndpi_load_malicious_sha1_file(m_module, config.sha1.c_str()) < 0)
            refuse("sha1", config.sha1, "nDPI refused the SHA-1 fingerprints file");
    } catch (...) {
        ndpi_exit_detection_module(m_module);
        throw;
    }
    ndpi_finalize_initialization(m_module);
}

DetectionModule::~DetectionModule() {
    HeapScope scope(m_heap.module);
    ndpi_exit_detection_module(m_module);
}

/// Charges what nDPI allocated and freed while working on one flow to that flow's ledger.
class DetectionModule::FlowCharge {
public:
    FlowCharge(HeapCounters& flows, FlowSlot& slot) noexcept
        : m_scope(flows),
          m_flows(flows),
          m_slot(slot),
          m_bytes(flows.liveBytes()),
          m_allocations(flows.liveAllocations()) {}
    ~FlowCharge() {
        m_slot.heapBytes += static_cast<std::int64_t>(m_flows.liveBytes() - m_bytes);
        m_slot.heapAllocations +=
            static_cast<std::int64_t>(m_flows.liveAllocations() - m_allocations);
    }
    FlowCharge(const FlowCharge&) = delete;
    FlowCharge& operator=(const FlowCharge&) = delete;

private:
    HeapScope m_scope;
    HeapCounters& m_flows;
    FlowSlot& m_slot;
    std::uint64_t m_bytes;
    std::uint64_t m_allocations;
};

ndpi_protocol DetectionModule::feed(FlowSlot& slot, const NdpiPacket& packet,
                                    std::uint64_t tsNs) noexcept {
    if (packet.transport != kNoTransport) {
        if (slot.transport == 0) slot.transport = packet.transport + 1;
        if (slot.transport != packet.transport + 1) return slot.proto;
    }
    const FlowCharge charge(m_heap.flows, slot);
    m_lastMs = std::max(m_lastMs, tsNs / 1'000'000);
    ++slot.fed;
    return ndpi_detection_process_packet(m_module, &slot.flow, packet.ip.data(),
                                         static_cast<unsigned short>(packet.ip.size()), m_lastMs);
}

bool DetectionModule::step(FlowSlot& slot, const NdpiPacket& packet, std::uint64_t tsNs,
                           std::uint16_t cap, bool guess) noexcept {
    slot.proto = feed(slot, packet, tsNs);
    const bool capped = slot.fed >= cap;
    if (slot.proto.app_protocol != NDPI_PROTOCOL_UNKNOWN) {
        if (capped || !extraDissectionPossible(slot)) slot.done = true;
    } else if (capped) {
        giveUp(slot, guess);
    }
    return slot.done;
}

bool DetectionModule::extraDissectionPossible(FlowSlot& slot) noexcept {
    const FlowCharge charge(m_heap.flows, slot);
    return ndpi_extra_dissection_possible(m_module, &slot.flow) != 0;
}

void DetectionModule::giveUp(FlowSlot& slot, bool guess) noexcept {
    const FlowCharge charge(m_heap.flows, slot);
    std::uint8_t guessed = 0;
    slot.proto = ndpi_detection_giveup(m_module, &slot.flow, guess ? 1 : 0, &guessed);
    slot.guessed = guessed != 0;
    slot.done = true;
}

void DetectionModule::release(FlowSlot& slot) noexcept {
    {
        const FlowCharge charge(m_heap.flows, slot);
        ndpi_free_flow_data(&slot.flow);
    }
    // What is left on the ledger nDPI allocated while working on this flow but keeps in the
    // module (an LRU cache made on first use, a tinc cache entry): it now counts as the module's.
    m_heap.flows.retainedBytes.fetch_add(static_cast<std::uint64_t>(slot.heapBytes),
                                         std::memory_order_relaxed);
    m_heap.flows.retainedAllocations.fetch_add(static_cast<std::uint64_t>(slot.heapAllocations),
                                               std::memory_order_relaxed);
    slot.heapBytes = 0;
    slot.heapAllocations = 0;
}

std::size_t DetectionModule::protocolName(const ndpi_protocol& p, std::span<char> buf) noexcept {
    if (buf.empty()) return 0;
    buf[0] = '\0';
    const char* s = ndpi_protocol2name(m_module, p, buf.data(), static_cast<u_int>(buf.size()));
    return s == nullptr ? 0 : strnlen(buf.data(), buf.size());
}

std::string_view DetectionModule::categoryName(ndpi_protocol_category_t c) noexcept {
    const char* s = ndpi_category_get_name(m_module, c);
    return s == nullptr ? std::string_view{} : std::string_view{s};
}

}  // namespace rowprobe::ndpi
