// The "flowstats" process plugin: NFStream 6.6's statistical features (sizes and inter-arrival
// times per direction and for both, TCP flag counts) and its early features (SPLT: the first N
// packets' direction, size and inter-arrival time), under NFStream's column names so that
// pipelines written for NFStream read rowprobe's JSON unchanged. Definitions and arithmetic:
// flowstats_stats.hpp. Per flow: one tier-2 record of 256 bytes of running statistics plus
// 6 bytes per SPLT packet (the record's size comes from the `splt` option at start-up), and a
// one-byte tier-1 state, the record's form: every packet of the flow updates the record, a
// short flow's only in its first line. With `basic`, also NFStream's basic columns (protocol,
// VLAN, and first/last seen, duration, packets and bytes per direction and for both) under
// its names, from 40 more bytes per flow. IPFIX elements exist only under the operator's PEN
// (`pen=`).
#include <algorithm>
#include <array>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>

#include "process/flowstats/flowstats_stats.hpp"
#include "rowprobe/options.hpp"
#include "rowprobe/prefetch.hpp"
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
    {.name = "basic",
     .shortName = "b",
     .type = OptionType::Flag,
     .defaultValue = "false",
     .help = "also NFStream's basic columns under its names: protocol, vlan_id and the first/last "
             "seen ms, duration ms, packets and bytes (in the accounting mode) of bidirectional, "
             "src2dst and dst2src (IPFIX: PEN elements 52-68)"},
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

/// NFStream's basic columns (`basic`), in its order; IPFIX elements 52-68 under the PEN.
/// Not among them: its `id` (a counter of its own), `expiration_id` (NFStream expires a flow
/// that outlived both timeouts as idle unless a packet of it came after the active one, which
/// the flow's end reason does not tell; rowprobe's end_reason is the exact reason), src_oui and
/// dst_oui (the first half of src_mac and dst_mac).
struct BasicFields {
    std::array<std::uint64_t, 3> firstSeen;  ///< per series, in kSeries' order
    std::array<std::uint64_t, 3> lastSeen;
    std::array<std::uint64_t, 3> duration;
    std::array<std::uint64_t, 3> packets;
    std::array<std::uint64_t, 3> bytes;
    std::uint16_t vlanId;
    std::uint8_t protocol;
};

/// The instance with the basic columns: the same fields first, so that their offsets hold.
struct FieldsWithBasic {
    Fields stats;
    BasicFields basic;
};

/// The three series in NFStream's order: its column prefix and what it covers.
struct SeriesName {
    std::string_view column;
    std::string_view whose;
};
constexpr SeriesName kSeries[] = {{"bidirectional", "both directions"},
                                  {"src2dst", "source to destination"},
                                  {"dst2src", "destination to source"}};

/// A column: its name (a series' value: the suffix after the series' prefix), its type (an
/// array's element type for SPLT), where its value is, and what it means.
struct Column {
    std::string_view name;
    FieldType type;
    std::size_t offset;  ///< in SeriesFields (a series' value) or in Fields (SPLT)
    std::string_view meaning;
};
/// One series' values, in NFStream's order within a series.
constexpr Column kSeriesColumns[] = {
    {"min_ps", FieldType::Unsigned16, offsetof(SeriesFields, minPs), "smallest packet size"},
    {"mean_ps", FieldType::Float32, offsetof(SeriesFields, meanPs), "mean packet size"},
    {"stddev_ps", FieldType::Float32, offsetof(SeriesFields, stddevPs),
     "sample standard deviation of the packet sizes"},
    {"max_ps", FieldType::Unsigned16, offsetof(SeriesFields, maxPs), "largest packet size"},
    {"min_piat_ms", FieldType::Unsigned64, offsetof(SeriesFields, minPiat),
     "smallest packet inter-arrival time, ms"},
    {"mean_piat_ms", FieldType::Float32, offsetof(SeriesFields, meanPiat),
     "mean packet inter-arrival time, ms"},
    {"stddev_piat_ms", FieldType::Float32, offsetof(SeriesFields, stddevPiat),
     "sample standard deviation of the inter-arrival times, ms"},
    {"max_piat_ms", FieldType::Unsigned64, offsetof(SeriesFields, maxPiat),
     "largest packet inter-arrival time, ms"},
};
/// The TCP flags counted, in the order of kFlagBits (flowstats_stats.hpp).
constexpr std::string_view kFlagNames[] = {"syn", "cwr", "ece", "urg", "ack", "psh", "rst", "fin"};
static_assert(std::size(kFlagNames) == kFlagBits.size());

/// The SPLT arrays (NFStream's order, after the flag counts).
constexpr Column kSpltColumns[] = {
    {"splt_direction", FieldType::Int8, offsetof(Fields, spltDirection),
     "direction of the first N packets: 0 src->dst, 1 dst->src, -1 none"},
    {"splt_ps", FieldType::Int32, offsetof(Fields, spltPs), "size of the first N packets, -1 none"},
    {"splt_piat_ms", FieldType::Int32, offsetof(Fields, spltPiat),
     "inter-arrival time of the first N packets (ms; the first is 0), -1 none"},
};

/// The per-series basic columns (the suffix after the series' prefix), in NFStream's order.
struct BasicColumn {
    std::string_view name;
    std::size_t offset;  ///< of the series' array in BasicFields
    std::string_view meaning;
};
constexpr BasicColumn kBasicSeriesColumns[] = {
    {"first_seen_ms", offsetof(BasicFields, firstSeen), "time of the first packet, ms"},
    {"last_seen_ms", offsetof(BasicFields, lastSeen), "time of the last packet, ms"},
    {"duration_ms", offsetof(BasicFields, duration), "last seen - first seen, ms"},
    {"packets", offsetof(BasicFields, packets), "packets"},
    {"bytes", offsetof(BasicFields, bytes), "bytes: the packets' sizes in the accounting mode"},
};
/// The flow's basic columns before the series' ones (NFStream's order).
constexpr Column kBasicFlowColumns[] = {
    {"protocol", FieldType::Unsigned8, offsetof(BasicFields, protocol), "IP protocol"},
    {"vlan_id", FieldType::Unsigned16, offsetof(BasicFields, vlanId), "outermost VLAN id, 0 none"},
};

constexpr std::size_t kSeriesFieldCount = std::size(kSeries) * std::size(kSeriesColumns);
constexpr std::size_t kFlagFieldCount = std::size(kSeries) * std::size(kFlagNames);
constexpr std::size_t kSpltFields = std::size(kSpltColumns);
constexpr std::size_t kBasicFieldCount =
    std::size(kBasicFlowColumns) + std::size(kSeries) * std::size(kBasicSeriesColumns);
constexpr std::size_t kFieldCount =
    kBasicFieldCount + kSeriesFieldCount + kFlagFieldCount + kSpltFields;

/// UniRec's name for a scalar (or, with `array`, an array's element) type of this plugin.
std::string_view unirecTypeOf(FieldType t, bool array) noexcept {
    switch (t) {
        case FieldType::Unsigned8:
            return "uint8";
        case FieldType::Unsigned16:
            return "uint16";
        case FieldType::Unsigned32:
            return "uint32";
        case FieldType::Unsigned64:
            return "uint64";
        case FieldType::Float32:
            return "float";
        case FieldType::Int8:
            return array ? "int8*" : "int8";
        default:
            return "int32*";
    }
}

std::string upper(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    return s;
}

/// The plugin's fields in NFStream's column order, built once (names are composed from the
/// tables above; the strings live as long as the process): the basic columns, then the
/// statistics, the flag counts and SPLT. Start-up only.
class FieldTable {
public:
    FieldTable() {
        std::size_t n = 0;
        auto add = [&](std::string name, std::string description, FieldType type,
                       std::size_t offset, FieldType element) {
            m_names[n] = std::move(name);
            m_unirec[n] = "FLOWSTATS_" + upper(m_names[n]);
            m_descriptions[n] = std::move(description);
            const bool array = type == FieldType::Array;
            m_fields[n] = {.name = m_names[n],
                           .description = m_descriptions[n],
                           .type = type,
                           .origin = FieldOrigin::Plugin,
                           .offset = static_cast<std::uint16_t>(offset),
                           .unirec = {m_unirec[n], unirecTypeOf(array ? element : type, array)},
                           .element = array ? element : FieldType::Unsigned8};
            ++n;
        };
        constexpr std::size_t kBasic = offsetof(FieldsWithBasic, basic);
        for (const Column& c : kBasicFlowColumns) {
            add(std::string(c.name), std::string(c.meaning), c.type, kBasic + c.offset, c.type);
        }
        for (std::size_t s = 0; s < std::size(kSeries); ++s) {
            for (const BasicColumn& c : kBasicSeriesColumns) {
                add(std::string(kSeries[s].column) + "_" + std::string(c.name),
                    std::string(c.meaning) + " (" + std::string(kSeries[s].whose) + ")",
                    FieldType::Unsigned64, kBasic + c.offset + s * sizeof(std::uint64_t),
                    FieldType::Unsigned64);
            }
        }
        for (std::size_t s = 0; s < std::size(kSeries); ++s) {
            for (const Column& c : kSeriesColumns) {
                add(std::string(kSeries[s].column) + "_" + std::string(c.name),
                    std::string(c.meaning) + " (" + std::string(kSeries[s].whose) + ")", c.type,
                    offsetof(Fields, series) + s * sizeof(SeriesFields) + c.offset, c.type);
            }
        }
        for (std::size_t s = 0; s < std::size(kSeries); ++s) {
            for (std::size_t i = 0; i < std::size(kFlagNames); ++i) {
                add(std::string(kSeries[s].column) + "_" + std::string(kFlagNames[i]) + "_packets",
                    "TCP packets with " + upper(std::string(kFlagNames[i])) + " (" +
                        std::string(kSeries[s].whose) + ")",
                    FieldType::Unsigned32,
                    offsetof(Fields, flags) + (s * 8 + i) * sizeof(std::uint32_t),
                    FieldType::Unsigned32);
            }
        }
        for (const Column& c : kSpltColumns) {
            add(std::string(c.name), std::string(c.meaning), FieldType::Array, c.offset, c.type);
        }
    }
    const FieldSpec& operator[](std::size_t i) const noexcept { return m_fields[i]; }

private:
    std::array<std::string, kFieldCount> m_names;
    std::array<std::string, kFieldCount> m_unirec;
    std::array<std::string, kFieldCount> m_descriptions;
    std::array<FieldSpec, kFieldCount> m_fields{};
};

const FieldTable& fieldTable() {
    static const FieldTable table;
    return table;
}

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
    /// The hooks use the parsed sizes, times and flags only (ProcessHooks::readsPayload).
    static constexpr bool kReadsPayload = false;
    /// Tier 1: the form of the flow's Record (flowstats_stats.hpp): kFull, or the number of
    /// packets in its Pending. One byte, so the table keeps it in the flow's own record
    /// (CachedFlow::inlineState) when no plugin before this one in -p has a state that small:
    /// the touch hook then knows which lines the next packet writes without a miss of its own.
    struct State {
        std::uint8_t form;
    };
    /// Tier 2: the statistics (a Record); with `basic` a Volume, then `m_splt` SPLT entries of 6
    /// bytes follow in the same record. Written only once the flow is no longer short.
    struct Ext {
        Record record;
    };
    /// The form (tier 1, zeroed with the flow) says what of the record was written, and SPLT
    /// entries are written before they are read, so a new flow does not zero up to 2 KiB.
    static constexpr bool kZeroExt = false;

    explicit FlowstatsPlugin(const Options& options)
        : m_splt(static_cast<std::size_t>(options.getInt("splt"))),
          m_mode(accountingOf(options.getString("accounting"))),
          m_basic(options.getFlag("basic")) {
        const auto pen = static_cast<std::uint32_t>(options.getInt("pen"));
        const std::size_t first = m_basic ? 0 : kBasicFieldCount;
        const std::size_t end = m_splt != 0 ? kFieldCount : kFieldCount - kSpltFields;
        for (std::size_t i = first; i < end; ++i) {
            FieldSpec f = fieldTable()[i];
            // The statistics kept the elements 1-51 they had before the basic columns (52-68).
            const auto id = static_cast<std::uint16_t>(i < kBasicFieldCount
                                                           ? kFieldCount - kBasicFieldCount + 1 + i
                                                           : i - kBasicFieldCount + 1);
            if (pen == 0) {
                f.ipfix = {};
            } else if (f.type == FieldType::Array) {
                f.ipfix = kBasicList;
                f.ipfixItem = {pen, id, ipfixLength(f.element)};
            } else {
                f.ipfix = {pen, id, ipfixLength(f.type)};
            }
            m_fields[m_fieldCount++] = f;
        }
    }

    std::string_view name() const noexcept override { return "flowstats"; }
    std::span<const FieldSpec> fields() const noexcept override {
        return {m_fields.data(), m_fieldCount};
    }
    /// The record's size depends on `basic` and `splt`: the statistics, the Volume and N SPLT
    /// entries.
    ProcessHooks hooks() const noexcept override {
        ProcessHooks h = ProcessPluginBase<FlowstatsPlugin>::hooks();
        h.extSize = recordBytes();
        return h;
    }

    /// What the next packet touches, fetched for writing. A short flow's (its form, loaded
    /// with the flow, says so): the Pending's one line. Otherwise a record of at most
    /// kPrefetchAll bytes (up to 21 SPLT entries, 14 with `basic`) is prefetched whole and
    /// nothing is loaded: no miss of the batch waits behind this record's. A larger one: the
    /// statistics' four lines (the first is loaded: it holds the packet count, so the SPLT
    /// entry's place), the Volume's line with `basic` and, while SPLT records, one entry.
    /// Loading the first line had cost little while the pools were on huge pages; on 4 KiB
    /// pages the load also waits for a page walk, and prefetching instead took the benchmark
    /// command (`flowstats;splt=10`) from 0.37 to 0.32 s on the 100k-flow capture and from 1.84
    /// to 1.65 s on the 1 M-flow one (docs/performance.md, "Session 19").
    std::uint64_t touch(const State& st, const Ext& e) const noexcept {
        const auto* base = reinterpret_cast<const unsigned char*>(&e);
        if (st.form < kPendingPackets) {
            prefetchWrite(base);
            return st.form;
        }
        if (recordBytes() <= kPrefetchAll) {
            for (std::size_t off = 0; off < recordBytes(); off += 64) prefetchWrite(base + off);
            return 0;
        }
        for (std::size_t line = 1; line < sizeof(FlowStats) / 64; ++line) {
            prefetchWrite(base + line * 64);
        }
        if (m_basic) prefetchWrite(base + sizeof(Ext));
        // A full Pending (the next packet replays it into the statistics) has no count there:
        // its replay writes the SPLT entries from the first.
        const std::uint32_t n = st.form == kFull ? e.record.stats.both.packets : 0;
        if (n < m_splt) prefetchWrite(base + spltOffset() + n * kSpltEntryBytes);
        return n;
    }

    HookResult postCreate(FlowContext& ctx) const noexcept {
        Ext* e = ctx.attachExt<Ext>();
        if (e == nullptr) return kDone;  // pool exhausted: exported without flowstats
        return onPacket(ctx, ctx.stateAs<State>(), *e);
    }
    HookResult postUpdate(FlowContext& ctx) const noexcept {
        Ext* e = ctx.ext<Ext>();
        if (e == nullptr) return kDone;
        return onPacket(ctx, ctx.stateAs<State>(), *e);
    }

    void write(FlowContext& ctx, InstanceWriter& out) const noexcept {
        Ext* e = ctx.ext<Ext>();
        if (e == nullptr) return;
        const std::uint8_t form = ctx.stateAs<State>().form;
        if (form == 0) return;  // no metered packet
        if (form == kFull) {
            write(e->record.stats, volume(*e), view(*e), *ctx.flow, out);
            return;
        }
        // A short flow: its packets replayed into scratch copies; the record stays unwritten.
        FlowStats s;
        Volume v;
        std::array<SpltEntry, kPendingPackets> entries;
        const SpltView splt{entries.data(), std::min(m_splt, kPendingPackets)};
        replay(e->record.pending, form, s, splt, m_basic ? &v : nullptr);
        write(s, m_basic ? &v : nullptr, splt, *ctx.flow, out);
    }

private:
    static constexpr std::size_t kSpltEntryBytes = sizeof(SpltEntry);
    /// The largest record the touch hook prefetches whole instead of loading its count: six
    /// lines, the statistics' four and two of SPLT entries (five lines with `splt=10`).
    static constexpr std::size_t kPrefetchAll = 384;

    /// The instance of a flow with statistics `s`, Volume `vol` (with `basic`) and SPLT entries
    /// `v` (the first min(packets, N) of them are the flow's).
    void write(const FlowStats& s, const Volume* vol, const SpltView& v, const FlowView& flow,
               InstanceWriter& out) const noexcept {
        Fields* f = nullptr;
        if (m_basic) {
            auto* fb = out.begin<FieldsWithBasic>();
            if (fb == nullptr) return;
            fillBasic(fb->basic, flow, s, *vol);
            f = &fb->stats;
        } else {
            f = out.begin<Fields>();
            if (f == nullptr) return;
        }
        fill(f->series[0], finish(s.both));
        for (std::size_t d = 0; d < 2; ++d) {
            fill(f->series[d + 1], finish(s.dir[d].s));
            for (std::size_t i = 0; i < kFlagBits.size(); ++i) {
                f->flags[(d + 1) * 8 + i] = s.dir[d].flags[i];
                f->flags[i] += s.dir[d].flags[i];
            }
        }
        if (m_splt != 0) {
            const std::size_t n = std::min<std::size_t>(s.both.packets, m_splt);
            // The N values only (N = splt, not kMaxSplt): the packets' then NFStream's -1.
            std::array<std::int8_t, kMaxSplt> direction;
            std::array<std::int32_t, kMaxSplt> ps;
            std::array<std::int32_t, kMaxSplt> piat;
            for (std::size_t i = 0; i < n; ++i) {
                const SpltEntry& x = v.entries[i];
                direction[i] = static_cast<std::int8_t>(x.direction());
                ps[i] = x.ps;
                piat[i] = static_cast<std::int32_t>(x.piat());  // at most 2^31 - 1
            }
            std::fill(direction.begin() + n, direction.begin() + m_splt, std::int8_t{-1});
            std::fill(ps.begin() + n, ps.begin() + m_splt, -1);
            std::fill(piat.begin() + n, piat.begin() + m_splt, -1);
            f->spltDirection = out.append(std::span<const std::int8_t>(direction.data(), m_splt));
            f->spltPs = out.append(std::span<const std::int32_t>(ps.data(), m_splt));
            f->spltPiat = out.append(std::span<const std::int32_t>(piat.data(), m_splt));
        }
        out.commit();
    }

    /// Where the SPLT entries start in the record: after the statistics and, with `basic`, the
    /// Volume.
    std::size_t spltOffset() const noexcept { return sizeof(Ext) + (m_basic ? sizeof(Volume) : 0); }
    /// The whole record: the statistics, the Volume with `basic`, N SPLT entries.
    std::size_t recordBytes() const noexcept { return spltOffset() + m_splt * kSpltEntryBytes; }
    SpltView view(Ext& e) const noexcept {
        return {reinterpret_cast<SpltEntry*>(reinterpret_cast<std::byte*>(&e) + spltOffset()),
                m_splt};
    }
    /// The record's Volume with `basic`, else null.
    Volume* volume(Ext& e) const noexcept {
        return m_basic ? reinterpret_cast<Volume*>(reinterpret_cast<std::byte*>(&e) + sizeof(Ext))
                       : nullptr;
    }

    HookResult onPacket(const FlowContext& ctx, State& st, Ext& e) const noexcept {
        const ParsedPacket& p = *ctx.packet;
        if (skippedByNfstream(p)) return kContinue;
        const std::uint8_t flags = p.key.proto == 6 ? p.tcpFlags : 0;
        addPacket(e.record, st.form, packetSize(p, m_mode), p.ts, ctx.forward, flags, view(e),
                  volume(e));
        return kContinue;
    }

    static void fillBasic(BasicFields& out, const FlowView& flow, const FlowStats& s,
                          const Volume& v) noexcept {
        out.protocol = flow.key->proto;
        out.vlanId = flow.key->vlan;
        const std::array<const Series*, 3> series = {&s.both, &s.dir[0].s, &s.dir[1].s};
        for (std::size_t i = 0; i < series.size(); ++i) {
            if (series[i]->packets == 0) continue;  // a direction without packets: all 0
            out.firstSeen[i] = v.firstMs[i];
            out.lastSeen[i] = series[i]->lastMs;
            out.duration[i] = series[i]->lastMs - v.firstMs[i];
            out.packets[i] = series[i]->packets;
        }
        // add() starts both counts at the flow's first packet: a direction without packets has 0.
        out.bytes = {v.bytes[0] + v.bytes[1], v.bytes[0], v.bytes[1]};
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
    std::size_t m_fieldCount = 0;
    std::size_t m_splt;
    Accounting m_mode;
    bool m_basic;
};

}  // namespace

ROWPROBE_REGISTER_PLUGIN(PluginKind::Process, FlowstatsPlugin,
                         {.name = "flowstats",
                          .summary = "NFStream's statistical flow features (sizes, inter-arrival "
                                     "times, TCP flag counts), SPLT and, with basic, its basic "
                                     "columns, under its column names",
                          .options = kOptions});

}  // namespace rowprobe::flowstats
