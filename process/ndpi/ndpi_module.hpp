// One nDPI 4.2 detection module per worker, and the per-flow record rowprobe keeps for nDPI.
//
//   DetectionModule (one per flow table, and one more for the export thread under
//   expiry=thread; never shared: nDPI keeps the current packet and LRU caches in it)
//     m_module   ndpi_detection_module_struct*: every protocol enabled, the configuration files
//                (protos, categories, risky-domains, ja3, sha1) loaded, LRU caches made up front
//     m_heap     HeapCounters `module` and `flows` (ndpi_heap.hpp)
//     m_lastMs   the latest packet time given to nDPI (ms): time never goes back (ndpiReader's
//                "timestamp bug" repair)
//   FlowSlot (the plugin's tier-2 record, from the per-worker pool, zeroed when taken)
//     flow       struct ndpi_flow_struct (688 bytes in 4.2) + nDPI's heap members, freed by
//                ndpi_free_flow_data when the flow is exported (release())
//     proto      the label so far {master, app, category}
//     heapBytes, heapAllocations   the flow's heap ledger (ndpi_heap.hpp)
//     fed        packets given to nDPI; done: detection finished (detected and nothing more to
//                dissect, the cap reached, or given up)
//
// Thread ownership: a module and the slots it touches belong to the thread running the hook.
// Costs: feed() is nDPI's work (a few hundred ns to a few µs per packet until detection) plus a
// bounds check; nothing allocates except nDPI itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "process/ndpi/ndpi_heap.hpp"

extern "C" {
#include <ndpi_api.h>
}

namespace rowprobe::ndpi {

/// The files an nDPI user passes to ndpiReader (-p, -c, -r, -j, -S); empty = not loaded.
struct ModuleConfig {
    std::string protos;
    std::string categories;
    std::string riskyDomains;
    std::string ja3;
    std::string sha1;
};

/// The tier-2 record of one flow.
struct FlowSlot {
    ndpi_flow_struct flow;
    ndpi_protocol proto;
    std::int64_t heapBytes;        ///< net bytes nDPI allocated working on this flow
    std::int64_t heapAllocations;  ///< net allocations, likewise
    std::uint16_t fed;
    std::uint16_t transport;  ///< NdpiPacket::transport of the first packet given, plus one
    bool done;
    bool guessed;
};

/// Why a packet was not given to nDPI (ndpiReader does not give it either).
enum class Skip : std::uint8_t {
    None,
    Fragment,      ///< a non-first IPv4 fragment
    Truncated,     ///< the capture holds less than the IP header says (snaplen)
    NotIp,         ///< no IP header in the capture
    CutTransport,  ///< a TCP or UDP header shorter than its minimum or its data offset
};

/// One packet as nDPI will see it.
struct NdpiPacket {
    std::span<const std::uint8_t> ip;  ///< from the IP header to the end of the capture
    /// The layer-4 protocol nDPI 4.2 finds (after IPv6 extension headers), or kNoTransport when
    /// it finds none and so ignores the packet.
    std::uint16_t transport;
};
inline constexpr std::uint16_t kNoTransport = 256;

/// The IP packet nDPI is given: from the IP header to the end of the capture, when the capture
/// holds the whole IP packet, it is not a non-first IPv4 fragment, and the TCP or UDP header
/// nDPI finds in it is whole. Pure, bounds-checked.
///
/// nDPI 4.2 takes a TCP packet of under 20 bytes, or shorter than its data offset, and a UDP
/// packet of under 8 bytes, as a packet with neither header, yet runs a labelled flow's extra
/// dissector on it; BitTorrent's then reads the port through the missing header (a NULL read,
/// found by ndpi_record_fuzz). ndpiReader never gives such a packet to the TCP or UDP flow: it
/// keys it with ports 0.
Skip ipPacketForNdpi(std::span<const std::uint8_t> fromIpHeader, std::uint16_t fragOffset,
                     NdpiPacket& out) noexcept;

/// Throws ConfigError naming the option and file when a configured file cannot be read.
void checkConfigFiles(const ModuleConfig& config);

class DetectionModule {
public:
    /// Makes and configures a module; throws ConfigError (component "process 'ndpi'") naming
    /// the option and file when a configuration file is missing, unreadable or refused.
    explicit DetectionModule(const ModuleConfig& config);
    ~DetectionModule();
    DetectionModule(const DetectionModule&) = delete;
    DetectionModule& operator=(const DetectionModule&) = delete;

    /// Gives one packet of `slot`'s flow to nDPI at capture time `tsNs`; returns what nDPI says
    /// of the flow now. A packet whose transport differs from that of the flow's first packet
    /// nDPI saw is not given (slot.proto is returned): nDPI 4.2 keeps one transport per flow,
    /// frees a TCP flow's TLS buffer only while the flow is TCP, and keeps TCP and UDP state in
    /// one union. The flow table keys flows by transport, so this only guards against headers
    /// that rowprobe's parser and nDPI walk differently.
    ndpi_protocol feed(FlowSlot& slot, const NdpiPacket& packet, std::uint64_t tsNs) noexcept;
    /// The plugin's rule for one packet: feeds it, then finishes the flow (slot.done) when nDPI
    /// has a label and nothing more to dissect, or gives it up (guessing when `guess`) when it
    /// has had `cap` packets. Returns slot.done.
    bool step(FlowSlot& slot, const NdpiPacket& packet, std::uint64_t tsNs, std::uint16_t cap,
              bool guess) noexcept;
    /// True when nDPI would still look at more packets of a detected flow (TLS certificate, ...).
    bool extraDissectionPossible(FlowSlot& slot) noexcept;
    /// Gives up on an undetected flow (ndpi_detection_giveup, guessing by port and address when
    /// `guess`).
    void giveUp(FlowSlot& slot, bool guess) noexcept;
    /// Frees the heap members nDPI hangs off the flow.
    void release(FlowSlot& slot) noexcept;

    /// "TLS.Google" (ndpi_protocol2name) into `buf`; returns its length.
    std::size_t protocolName(const ndpi_protocol& p, std::span<char> buf) noexcept;
    std::string_view categoryName(ndpi_protocol_category_t c) noexcept;

    ndpi_detection_module_struct* raw() noexcept { return m_module; }
    const HeapCounters& moduleHeap() const noexcept { return m_heap.module; }
    const HeapCounters& flowHeap() const noexcept { return m_heap.flows; }
    HeapCounters& flowHeap() noexcept { return m_heap.flows; }

private:
    class FlowCharge;
    struct Heap {
        HeapCounters module;
        HeapCounters flows;
    };
    Heap m_heap;
    ndpi_detection_module_struct* m_module = nullptr;
    std::uint64_t m_lastMs = 0;
};

}  // namespace rowprobe::ndpi
