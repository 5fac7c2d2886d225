// adaptive: a position table tuned offline (docs/policies.md; the tuner: tools/tuner/README.md).
//
// Sources: M. Žádník, M. Canini, "Evolution of Cache Replacement Policies to Track Heavy-hitter
// Flows", PAM 2011 (LNCS 6579), and ANCS 2010 poster: any row replacement policy over positions
// is a vector "where does a hit at position p move the flow" plus an insert position; a genetic
// algorithm evolves it on traces and beats LRU on missed heavy hitters. M. Žádník, PhD thesis
// (BUT FIT 2013): the hit target is shifted by a per-class offset from a classifier over packet
// headers (how soon the flow's next packet comes). Thesis plugin `gacache` (Zainullin 2024):
// L/4 move tuples, insert position, four class offsets. The file format, validation and the
// classifier live in adaptive_config.hpp (shared with the tuner).
//
// Row-local form: one RankOrder per row. At start-up the configuration is unpacked into
// hitTo[class][p] = min(p, clamp(T[p] + offset[class], 0, L-1)) and insertAt[class], so a hit
// is one table load and one rotation.
// * classify: the packet's class from its headers (classifier `none`: always SHORT).
// * Hit at rank p: rotate to hitTo[class][p] (never backwards).
// * Free slot: the lowest-ranked hole, no move. Full row: evict rank L-1, insert at
//   insertAt[class]. Removals compact the hole to the tail.
// Without `adaptive-config` the table is ipfixprobe's LRU (all targets 0, insert L/2), which
// is hit-for-hit identical to `lru` as long as flows leave rows only by eviction.
// Costs: as `lru` plus one byte load per hit (and the classifier's few compares).
#include <array>
#include <string>

#include "adaptive_config.hpp"
#include "cache/policy_registry.hpp"
#include "cache/rank_order.hpp"
#include "cache/row_policy.hpp"

namespace rowprobe::storage {

namespace {
constexpr OptionSpec kAdaptiveOptions[] = {
    {.name = "adaptive-config",
     .type = OptionType::String,
     .help = "position table file written by the tuner (default: ipfixprobe's LRU table)"},
};
}  // namespace

template <unsigned L>
class AdaptivePolicy final : public PolicyBase<AdaptivePolicy<L>> {
public:
    static constexpr std::string_view kName = "adaptive";
    struct RowState {
        RankOrder<L> order;
    };
    struct SlotMeta {};
    using Row = RowRef<AdaptivePolicy, L>;
    using ConstRow = ConstRowRef<AdaptivePolicy, L>;

    explicit AdaptivePolicy(const Options& options)
        : AdaptivePolicy(options.explicitlySet("adaptive-config")
                             ? loadAdaptiveConfig(options.getString("adaptive-config"), L)
                             : AdaptiveConfig::lruEquivalent(L)) {}

    explicit AdaptivePolicy(const AdaptiveConfig& config) : m_classifier(config.classifier) {
        const std::vector<unsigned> t = config.targets();
        for (std::size_t c = 0; c < kPacketClassCount; ++c) {
            for (unsigned p = 0; p < L; ++p) {
                const int to = std::clamp(static_cast<int>(t[p]) + config.offsets[c], 0,
                                          static_cast<int>(L) - 1);
                m_hitTo[c][p] = static_cast<std::uint8_t>(std::min(p, static_cast<unsigned>(to)));
            }
            m_insertAt[c] = static_cast<std::uint8_t>(config.insert[c]);
        }
    }

    void classify(PacketContext& ctx) const noexcept {
        if (m_classifier != AdaptiveClassifier::None && ctx.packet != nullptr) {
            ctx.cls = static_cast<std::uint8_t>(classifyPacket(m_classifier, *ctx.packet));
        }
    }
    void onHit(Row row, Slot s, const PacketContext& ctx) noexcept {
        auto& o = row.state().order;
        const unsigned to = m_hitTo[ctx.cls & 3U][o.rankOf(s)];
        if (to == 0) {
            o.moveTo(s, 0);  // the common target: a rotation specialised for the front
        } else {
            o.moveTo(s, to);
        }
    }
    void onInsert(Row row, Slot s, const PacketContext& ctx, Vacancy v) noexcept {
        if (v != Vacancy::Free) row.state().order.moveTo(s, m_insertAt[ctx.cls & 3U]);
    }
    void onErase(Row row, Slot s, EndReason) noexcept { row.state().order.moveTo(s, L - 1); }
    Slot victim(ConstRow row, const PacketContext&) const noexcept {
        return row.state().order.at(L - 1);
    }

private:
    std::array<std::array<std::uint8_t, L>, kPacketClassCount> m_hitTo{};
    std::array<std::uint8_t, kPacketClassCount> m_insertAt{};
    AdaptiveClassifier m_classifier;
};

ROWPROBE_REGISTER_ROW_POLICY(
    AdaptivePolicy,
    "position table + insert position + class offsets, tuned offline (Zadnik & Canini 2011)",
    kAdaptiveOptions);

}  // namespace rowprobe::storage
