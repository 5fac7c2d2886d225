// The "flowstats" process plugin: NFStream 6.6's statistical features (sizes and inter-arrival
// times per direction and for both, TCP flag counts) and its early features (SPLT: the first N
// packets' direction, size and inter-arrival time), under NFStream's column names so that
// pipelines written for NFStream read rowprobe's JSON unchanged. Definitions and arithmetic:
// flowstats_stats.hpp. Per flow: one tier-2 record of 256 bytes of running statistics plus
// 8 bytes per SPLT packet (the record's size comes from the `splt` option at start-up); every
// packet of the flow updates it. IPFIX elements exist only under the operator's PEN (`pen=`).
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "process/flowstats/flowstats_stats.hpp"
#include "rowprobe/options.hpp"
#include "rowprobe/process.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::flowstats {

namespace {

constexpr std::string_view kAccountingModes[] = {"link", "ip", "transport", "payload"};

constexpr OptionSpec kOptions[] = {
    {.name = "splt",
     .shortName = "n",
     .type = OptionType::Int,
     .defaultValue = "0",
     .help = "SPLT: direction, size and inter-arrival time of the first N packets, padded with -1 "
             "(NFStream's splt_analysis; 0 = off, no SPLT fields)",
     .min = 0,
     .max = static_cast<double>(kMaxSplt)},
    {.name = "accounting",
     .shortName = "a",
     .type = OptionType::Choice,
     .defaultValue = "link",
     .help = "packet size: frame on the wire (link), IP length (ip), IP payload (transport), "
             "transport payload (payload): NFStream's accounting_mode 0-3",
     .choices = kAccountingModes},
    {.name = "pen",
     .type = OptionType::Int,
     .defaultValue = "0",
     .help = "IPFIX: your Private Enterprise Number; the fields are then elements 1-51 under it "
             "(SPLT as basicLists); 0 = the fields are left out of IPFIX",
     .min = 0,
     .max = 4294967295.0},
};

/// The exported values of one series (both directions, src→dst, dst→src).
struct SeriesFields {
    std::uint64_t minPiat;
    std::uint64_t maxPiat;
    float meanPs;
    float stddevPs;
    float meanPiat;
    float stddevPiat;
    std::uint16_t minPs;
    std::uint16_t maxPs;
};

/// One exported instance: three series, 24 flag counts, the SPLT arrays.
struct Fields {
    std::array<SeriesFields, 3> series;
    std::array<std::uint32_t, 24> flags;
    VarRef spltDirection;
    VarRef spltPs;
    VarRef spltPiat;
};

constexpr FieldSpec scalar(std::string_view name, std::string_view unirec, std::string_view type,
                           FieldType t, std::string_view description, std::size_t offset) {
    return {.name = name,
            .description = description,
            .type = t,
            .origin = FieldOrigin::Plugin,
            .offset = static_cast<std::uint16_t>(offset),
            .unirec = {unirec, type}};
}
constexpr FieldSpec u16(std::string_view name, std::string_view unirec, std::string_view d,
                        std::size_t offset) {
    return scalar(name, unirec, "uint16", FieldType::Unsigned16, d, offset);
}
constexpr FieldSpec u32(std::string_view name, std::string_view unirec, std::string_view d,
                        std::size_t offset) {
    return scalar(name, unirec, "uint32", FieldType::Unsigned32, d, offset);
}
constexpr FieldSpec u64(std::string_view name, std::string_view unirec, std::string_view d,
                        std::size_t offset) {
    return scalar(name, unirec, "uint64", FieldType::Unsigned64, d, offset);
}
constexpr FieldSpec f32(std::string_view name, std::string_view unirec, std::string_view d,
                        std::size_t offset) {
    return scalar(name, unirec, "float", FieldType::Float32, d, offset);
}
constexpr FieldSpec array(std::string_view name, std::string_view unirec, std::string_view type,
                          FieldType element, std::string_view d, std::size_t offset) {
    return {.name = name,
            .description = d,
            .type = FieldType::Array,
            .origin = FieldOrigin::Plugin,
            .offset = static_cast<std::uint16_t>(offset),
            .unirec = {unirec, type},
            .element = element};
}

// NFStream's column order.
constexpr FieldSpec kFields[] = {
    u16("bidirectional_min_ps", "FLOWSTATS_BIDIRECTIONAL_MIN_PS",
        "smallest packet size (both directions)",
        offsetof(Fields, series) + 0 * sizeof(SeriesFields) + offsetof(SeriesFields, minPs)),
    f32("bidirectional_mean_ps", "FLOWSTATS_BIDIRECTIONAL_MEAN_PS",
        "mean packet size (both directions)",
        offsetof(Fields, series) + 0 * sizeof(SeriesFields) + offsetof(SeriesFields, meanPs)),
    f32("bidirectional_stddev_ps", "FLOWSTATS_BIDIRECTIONAL_STDDEV_PS",
        "sample standard deviation of the packet sizes (both directions)",
        offsetof(Fields, series) + 0 * sizeof(SeriesFields) + offsetof(SeriesFields, stddevPs)),
    u16("bidirectional_max_ps", "FLOWSTATS_BIDIRECTIONAL_MAX_PS",
        "largest packet size (both directions)",
        offsetof(Fields, series) + 0 * sizeof(SeriesFields) + offsetof(SeriesFields, maxPs)),
    u64("bidirectional_min_piat_ms", "FLOWSTATS_BIDIRECTIONAL_MIN_PIAT_MS",
        "smallest packet inter-arrival time, ms (both directions)",
        offsetof(Fields, series) + 0 * sizeof(SeriesFields) + offsetof(SeriesFields, minPiat)),
    f32("bidirectional_mean_piat_ms", "FLOWSTATS_BIDIRECTIONAL_MEAN_PIAT_MS",
        "mean packet inter-arrival time, ms (both directions)",
        offsetof(Fields, series) + 0 * sizeof(SeriesFields) + offsetof(SeriesFields, meanPiat)),
    f32("bidirectional_stddev_piat_ms", "FLOWSTATS_BIDIRECTIONAL_STDDEV_PIAT_MS",
        "sample standard deviation of the inter-arrival times, ms (both directions)",
        offsetof(Fields, series) + 0 * sizeof(SeriesFields) + offsetof(SeriesFields, stddevPiat)),
    u64("bidirectional_max_piat_ms", "FLOWSTATS_BIDIRECTIONAL_MAX_PIAT_MS",
        "largest packet inter-arrival time, ms (both directions)",
        offsetof(Fields, series) + 0 * sizeof(SeriesFields) + offsetof(SeriesFields, maxPiat)),
    u16("src2dst_min_ps", "FLOWSTATS_SRC2DST_MIN_PS",
        "smallest packet size (source to destination)",
        offsetof(Fields, series) + 1 * sizeof(SeriesFields) + offsetof(SeriesFields, minPs)),
    f32("src2dst_mean_ps", "FLOWSTATS_SRC2DST_MEAN_PS", "mean packet size (source to destination)",
        offsetof(Fields, series) + 1 * sizeof(SeriesFields) + offsetof(SeriesFields, meanPs)),
    f32("src2dst_stddev_ps", "FLOWSTATS_SRC2DST_STDDEV_PS",
        "sample standard deviation of the packet sizes (source to destination)",
        offsetof(Fields, series) + 1 * sizeof(SeriesFields) + offsetof(SeriesFields, stddevPs)),
    u16("src2dst_max_ps", "FLOWSTATS_SRC2DST_MAX_PS", "largest packet size (source to destination)",
        offsetof(Fields, series) + 1 * sizeof(SeriesFields) + offsetof(SeriesFields, maxPs)),
    u64("src2dst_min_piat_ms", "FLOWSTATS_SRC2DST_MIN_PIAT_MS",
        "smallest packet inter-arrival time, ms (source to destination)",
        offsetof(Fields, series) + 1 * sizeof(SeriesFields) + offsetof(SeriesFields, minPiat)),
    f32("src2dst_mean_piat_ms", "FLOWSTATS_SRC2DST_MEAN_PIAT_MS",
        "mean packet inter-arrival time, ms (source to destination)",
        offsetof(Fields, series) + 1 * sizeof(SeriesFields) + offsetof(SeriesFields, meanPiat)),
    f32("src2dst_stddev_piat_ms", "FLOWSTATS_SRC2DST_STDDEV_PIAT_MS",
        "sample standard deviation of the inter-arrival times, ms (source to destination)",
        offsetof(Fields, series) + 1 * sizeof(SeriesFields) + offsetof(SeriesFields, stddevPiat)),
    u64("src2dst_max_piat_ms", "FLOWSTATS_SRC2DST_MAX_PIAT_MS",
        "largest packet inter-arrival time, ms (source to destination)",
        offsetof(Fields, series) + 1 * sizeof(SeriesFields) + offsetof(SeriesFields, maxPiat)),
    u16("dst2src_min_ps", "FLOWSTATS_DST2SRC_MIN_PS",
        "smallest packet size (destination to source)",
        offsetof(Fields, series) + 2 * sizeof(SeriesFields) + offsetof(SeriesFields, minPs)),
    f32("dst2src_mean_ps", "FLOWSTATS_DST2SRC_MEAN_PS", "mean packet size (destination to source)",
        offsetof(Fields, series) + 2 * sizeof(SeriesFields) + offsetof(SeriesFields, meanPs)),
    f32("dst2src_stddev_ps", "FLOWSTATS_DST2SRC_STDDEV_PS",
        "sample standard deviation of the packet sizes (destination to source)",
        offsetof(Fields, series) + 2 * sizeof(SeriesFields) + offsetof(SeriesFields, stddevPs)),
    u16("dst2src_max_ps", "FLOWSTATS_DST2SRC_MAX_PS", "largest packet size (destination to source)",
        offsetof(Fields, series) + 2 * sizeof(SeriesFields) + offsetof(SeriesFields, maxPs)),
    u64("dst2src_min_piat_ms", "FLOWSTATS_DST2SRC_MIN_PIAT_MS",
        "smallest packet inter-arrival time, ms (destination to source)",
        offsetof(Fields, series) + 2 * sizeof(SeriesFields) + offsetof(SeriesFields, minPiat)),
    f32("dst2src_mean_piat_ms", "FLOWSTATS_DST2SRC_MEAN_PIAT_MS",
        "mean packet inter-arrival time, ms (destination to source)",
        offsetof(Fields, series) + 2 * sizeof(SeriesFields) + offsetof(SeriesFields, meanPiat)),
    f32("dst2src_stddev_piat_ms", "FLOWSTATS_DST2SRC_STDDEV_PIAT_MS",
        "sample standard deviation of the inter-arrival times, ms (destination to source)",
        offsetof(Fields, series) + 2 * sizeof(SeriesFields) + offsetof(SeriesFields, stddevPiat)),
    u64("dst2src_max_piat_ms", "FLOWSTATS_DST2SRC_MAX_PIAT_MS",
        "largest packet inter-arrival time, ms (destination to source)",
        offsetof(Fields, series) + 2 * sizeof(SeriesFields) + offsetof(SeriesFields, maxPiat)),
    u32("bidirectional_syn_packets", "FLOWSTATS_BIDIRECTIONAL_SYN_PACKETS",
        "TCP packets with SYN (both directions)",
        offsetof(Fields, flags) + (0 * 8 + 0) * sizeof(std::uint32_t)),
    u32("bidirectional_cwr_packets", "FLOWSTATS_BIDIRECTIONAL_CWR_PACKETS",
        "TCP packets with CWR (both directions)",
        offsetof(Fields, flags) + (0 * 8 + 1) * sizeof(std::uint32_t)),
    u32("bidirectional_ece_packets", "FLOWSTATS_BIDIRECTIONAL_ECE_PACKETS",
        "TCP packets with ECE (both directions)",
        offsetof(Fields, flags) + (0 * 8 + 2) * sizeof(std::uint32_t)),
    u32("bidirectional_urg_packets", "FLOWSTATS_BIDIRECTIONAL_URG_PACKETS",
        "TCP packets with URG (both directions)",
        offsetof(Fields, flags) + (0 * 8 + 3) * sizeof(std::uint32_t)),
    u32("bidirectional_ack_packets", "FLOWSTATS_BIDIRECTIONAL_ACK_PACKETS",
        "TCP packets with ACK (both directions)",
        offsetof(Fields, flags) + (0 * 8 + 4) * sizeof(std::uint32_t)),
    u32("bidirectional_psh_packets", "FLOWSTATS_BIDIRECTIONAL_PSH_PACKETS",
        "TCP packets with PSH (both directions)",
        offsetof(Fields, flags) + (0 * 8 + 5) * sizeof(std::uint32_t)),
    u32("bidirectional_rst_packets", "FLOWSTATS_BIDIRECTIONAL_RST_PACKETS",
        "TCP packets with RST (both directions)",
        offsetof(Fields, flags) + (0 * 8 + 6) * sizeof(std::uint32_t)),
    u32("bidirectional_fin_packets", "FLOWSTATS_BIDIRECTIONAL_FIN_PACKETS",
        "TCP packets with FIN (both directions)",
        offsetof(Fields, flags) + (0 * 8 + 7) * sizeof(std::uint32_t)),
    u32("src2dst_syn_packets", "FLOWSTATS_SRC2DST_SYN_PACKETS",
        "TCP packets with SYN (source to destination)",
        offsetof(Fields, flags) + (1 * 8 + 0) * sizeof(std::uint32_t)),
    u32("src2dst_cwr_packets", "FLOWSTATS_SRC2DST_CWR_PACKETS",
        "TCP packets with CWR (source to destination)",
        offsetof(Fields, flags) + (1 * 8 + 1) * sizeof(std::uint32_t)),
    u32("src2dst_ece_packets", "FLOWSTATS_SRC2DST_ECE_PACKETS",
        "TCP packets with ECE (source to destination)",
        offsetof(Fields, flags) + (1 * 8 + 2) * sizeof(std::uint32_t)),
    u32("src2dst_urg_packets", "FLOWSTATS_SRC2DST_URG_PACKETS",
        "TCP packets with URG (source to destination)",
        offsetof(Fields, flags) + (1 * 8 + 3) * sizeof(std::uint32_t)),
    u32("src2dst_ack_packets", "FLOWSTATS_SRC2DST_ACK_PACKETS",
        "TCP packets with ACK (source to destination)",
        offsetof(Fields, flags) + (1 * 8 + 4) * sizeof(std::uint32_t)),
    u32("src2dst_psh_packets", "FLOWSTATS_SRC2DST_PSH_PACKETS",
        "TCP packets with PSH (source to destination)",
        offsetof(Fields, flags) + (1 * 8 + 5) * sizeof(std::uint32_t)),
    u32("src2dst_rst_packets", "FLOWSTATS_SRC2DST_RST_PACKETS",
        "TCP packets with RST (source to destination)",
        offsetof(Fields, flags) + (1 * 8 + 6) * sizeof(std::uint32_t)),
    u32("src2dst_fin_packets", "FLOWSTATS_SRC2DST_FIN_PACKETS",
        "TCP packets with FIN (source to destination)",
        offsetof(Fields, flags) + (1 * 8 + 7) * sizeof(std::uint32_t)),
    u32("dst2src_syn_packets", "FLOWSTATS_DST2SRC_SYN_PACKETS",
        "TCP packets with SYN (destination to source)",
        offsetof(Fields, flags) + (2 * 8 + 0) * sizeof(std::uint32_t)),
    u32("dst2src_cwr_packets", "FLOWSTATS_DST2SRC_CWR_PACKETS",
        "TCP packets with CWR (destination to source)",
        offsetof(Fields, flags) + (2 * 8 + 1) * sizeof(std::uint32_t)),
    u32("dst2src_ece_packets", "FLOWSTATS_DST2SRC_ECE_PACKETS",
        "TCP packets with ECE (destination to source)",
        offsetof(Fields, flags) + (2 * 8 + 2) * sizeof(std::uint32_t)),
    u32("dst2src_urg_packets", "FLOWSTATS_DST2SRC_URG_PACKETS",
        "TCP packets with URG (destination to source)",
        offsetof(Fields, flags) + (2 * 8 + 3) * sizeof(std::uint32_t)),
    u32("dst2src_ack_packets", "FLOWSTATS_DST2SRC_ACK_PACKETS",
        "TCP packets with ACK (destination to source)",
        offsetof(Fields, flags) + (2 * 8 + 4) * sizeof(std::uint32_t)),
    u32("dst2src_psh_packets", "FLOWSTATS_DST2SRC_PSH_PACKETS",
        "TCP packets with PSH (destination to source)",
        offsetof(Fields, flags) + (2 * 8 + 5) * sizeof(std::uint32_t)),
    u32("dst2src_rst_packets", "FLOWSTATS_DST2SRC_RST_PACKETS",
        "TCP packets with RST (destination to source)",
        offsetof(Fields, flags) + (2 * 8 + 6) * sizeof(std::uint32_t)),
    u32("dst2src_fin_packets", "FLOWSTATS_DST2SRC_FIN_PACKETS",
        "TCP packets with FIN (destination to source)",
        offsetof(Fields, flags) + (2 * 8 + 7) * sizeof(std::uint32_t)),
    array("splt_direction", "FLOWSTATS_SPLT_DIRECTION", "int8*", FieldType::Int8,
          "direction of the first N packets: 0 src->dst, 1 dst->src, -1 none",
          offsetof(Fields, spltDirection)),
    array("splt_ps", "FLOWSTATS_SPLT_PS", "float*", FieldType::Float32,
          "size of the first N packets, -1 none", offsetof(Fields, spltPs)),
    array("splt_piat_ms", "FLOWSTATS_SPLT_PIAT_MS", "float*", FieldType::Float32,
          "inter-arrival time of the first N packets (ms; the first is 0), -1 none",
          offsetof(Fields, spltPiat)),
};
constexpr std::size_t kFieldCount = std::size(kFields);
constexpr std::size_t kSpltFields = 3;

/// IPFIX length of a scalar field's element.
std::uint16_t ipfixLength(FieldType t) noexcept {
    return static_cast<std::uint16_t>(fieldTypeSize(t));
}

Accounting accountingOf(const std::string& mode) noexcept {
    for (std::size_t i = 0; i < std::size(kAccountingModes); ++i) {
        if (mode == kAccountingModes[i]) return static_cast<Accounting>(i);
    }
    return Accounting::Link;
}

class FlowstatsPlugin final : public ProcessPluginBase<FlowstatsPlugin> {
public:
    /// Tier 2: the running statistics; `m_splt` SPLT entries of 8 bytes follow in the same
    /// record.
    struct Ext {
        FlowStats stats;
    };
    /// postCreate clears the statistics and SPLT entries are written before they are read, so
    /// a new flow does not zero up to 2 KiB of record.
    static constexpr bool kZeroExt = false;

    explicit FlowstatsPlugin(const Options& options)
        : m_splt(static_cast<std::size_t>(options.getInt("splt"))),
          m_mode(accountingOf(options.getString("accounting"))) {
        const auto pen = static_cast<std::uint32_t>(options.getInt("pen"));
        for (std::size_t i = 0; i < kFieldCount; ++i) {
            FieldSpec f = kFields[i];
            const auto id = static_cast<std::uint16_t>(i + 1);
            if (pen == 0) {
                f.ipfix = {};
            } else if (f.type == FieldType::Array) {
                f.ipfix = kBasicList;
                f.ipfixItem = {pen, id, ipfixLength(f.element)};
            } else {
                f.ipfix = {pen, id, ipfixLength(f.type)};
            }
            m_fields[i] = f;
        }
    }

    std::string_view name() const noexcept override { return "flowstats"; }
    std::span<const FieldSpec> fields() const noexcept override {
        return {m_fields.data(), m_splt != 0 ? kFieldCount : kFieldCount - kSpltFields};
    }
    /// The record's size depends on `splt`: the statistics and N SPLT entries.
    ProcessHooks hooks() const noexcept override {
        ProcessHooks h = ProcessPluginBase<FlowstatsPlugin>::hooks();
        h.extSize = sizeof(Ext) + m_splt * kSpltEntryBytes;
        return h;
    }

    /// What the next packet touches: the statistics' four lines (the first is read: it holds
    /// the packet count, so the SPLT entry's place) and, while SPLT records, one entry, fetched
    /// for writing. Without it the table would load up to 512 bytes of the record.
    std::uint64_t touch(const Ext& e) const noexcept {
        const auto* base = reinterpret_cast<const unsigned char*>(&e);
        for (std::size_t line = 1; line < sizeof(FlowStats) / 64; ++line) {
            __builtin_prefetch(base + line * 64, 1, 3);
        }
        const std::uint32_t n = e.stats.both.packets;
        if (n < m_splt) __builtin_prefetch(base + sizeof(Ext) + n * sizeof(SpltEntry), 1, 3);
        return n;
    }

    HookResult postCreate(FlowContext& ctx) const noexcept {
        Ext* e = ctx.attachExt<Ext>();
        if (e == nullptr) return kDone;  // pool exhausted: exported without flowstats
        start(e->stats);
        return onPacket(ctx, *e);
    }
    HookResult postUpdate(FlowContext& ctx) const noexcept {
        Ext* e = ctx.ext<Ext>();
        if (e == nullptr) return kDone;
        return onPacket(ctx, *e);
    }

    void write(FlowContext& ctx, InstanceWriter& out) const noexcept {
        Ext* e = ctx.ext<Ext>();
        if (e == nullptr || e->stats.both.packets == 0) return;
        Fields* f = out.begin<Fields>();
        if (f == nullptr) return;
        const FlowStats& s = e->stats;
        fill(f->series[0], finish(s.both));
        for (std::size_t d = 0; d < 2; ++d) {
            fill(f->series[d + 1], finish(s.dir[d].s));
            for (std::size_t i = 0; i < kFlagBits.size(); ++i) {
                f->flags[(d + 1) * 8 + i] = s.dir[d].flags[i];
                f->flags[i] += s.dir[d].flags[i];
            }
        }
        if (m_splt != 0) {
            const SpltView v = view(*e);
            const std::size_t n = std::min<std::size_t>(s.both.packets, m_splt);
            std::array<std::int8_t, kMaxSplt> direction;
            std::array<float, kMaxSplt> ps;
            std::array<float, kMaxSplt> piat;
            direction.fill(-1);
            ps.fill(-1.0F);
            piat.fill(-1.0F);
            for (std::size_t i = 0; i < n; ++i) {
                const SpltEntry& x = v.entries[i];
                direction[i] = static_cast<std::int8_t>(x.direction);
                ps[i] = static_cast<float>(x.ps);
                piat[i] = static_cast<float>(x.piat);
            }
            f->spltDirection = out.append(std::span<const std::int8_t>(direction.data(), m_splt));
            f->spltPs = out.append(std::span<const float>(ps.data(), m_splt));
            f->spltPiat = out.append(std::span<const float>(piat.data(), m_splt));
        }
        out.commit();
    }

private:
    static constexpr std::size_t kSpltEntryBytes = sizeof(SpltEntry);

    SpltView view(Ext& e) const noexcept {
        return {reinterpret_cast<SpltEntry*>(reinterpret_cast<std::byte*>(&e) + sizeof(Ext)),
                m_splt};
    }

    HookResult onPacket(const FlowContext& ctx, Ext& e) const noexcept {
        const ParsedPacket& p = *ctx.packet;
        if (skippedByNfstream(p)) return kContinue;
        const std::uint8_t flags = p.key.proto == 6 ? p.tcpFlags : 0;
        add(e.stats, packetSize(p, m_mode), p.ts, ctx.forward, flags, view(e));
        return kContinue;
    }

    static void fill(SeriesFields& out, const SeriesResult& r) noexcept {
        out.minPs = r.minPs;
        out.maxPs = r.maxPs;
        out.meanPs = static_cast<float>(r.meanPs);
        out.stddevPs = static_cast<float>(r.stddevPs);
        out.minPiat = r.minPiat;
        out.maxPiat = r.maxPiat;
        out.meanPiat = static_cast<float>(r.meanPiat);
        out.stddevPiat = static_cast<float>(r.stddevPiat);
    }

    std::array<FieldSpec, kFieldCount> m_fields{};
    std::size_t m_splt;
    Accounting m_mode;
};

}  // namespace

ROWPROBE_REGISTER_PLUGIN(PluginKind::Process, FlowstatsPlugin,
                         {.name = "flowstats",
                          .summary = "NFStream's statistical flow features (sizes, inter-arrival "
                                     "times, TCP flag counts) and SPLT, under its column names",
                          .options = kOptions});

}  // namespace rowprobe::flowstats
