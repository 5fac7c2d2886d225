// fdrc: Flow-Driven Rule Caching inside one row (docs/policies.md).
//
// Source: H. Li, S. Guo, C. Wu, J. Li, "FDRC: Flow-Driven Rule Caching Optimization in
// Software Defined Networking", IEEE ICC 2015, pp. 5777-5782 (arXiv 1803.04270). Each cached
// entry predicts when its flow's next packet arrives from the last inter-packet gap; when the
// prediction passes without a packet, the interval doubles (the flow slows down) up to a
// maximum wait Tmax, after which the entry is presumed dead ("frozen"). The victim is the entry
// whose next packet is predicted furthest away. Thesis: branch feature/flow-driven-cache.
//
// Row-local form: SlotMeta per slot = {next predicted packet, current interval}, both in
// microseconds of packet time (32-bit, compared modulo 2^32: exact while Tmax <= 60 s, since a
// live prediction is never more than Tmax ahead of the clock). interval == 0 marks a frozen flow.
// * New flow: interval = Tmax, next = ts + Tmax. A hit never reorders.
// * Aging at `now` (before an update, and when scoring victims without storing the result):
//   while now >= next and interval < Tmax: interval = min(2·interval, Tmax), next += interval;
//   then if interval == Tmax and now >= next: frozen.
// * Hit with gap > 0 since the flow's previous packet: interval = min(gap, Tmax),
//   next = ts + interval, unfrozen.
// * Full row: victim = frozen flows first, else the largest predicted wait next - now (lowest
//   slot on ties). A free slot: the lowest-numbered.
// Costs: hit O(1) plus the aging loop (<= log2(Tmax/1 µs) ≈ 21 steps, usually 0-2); victim
// scores L slots from SlotMeta on the row's own lines (records are not touched).
#include <string>

#include "cache/policy_registry.hpp"
#include "cache/row_policy.hpp"

namespace rowprobe::storage {

namespace {
constexpr OptionSpec kFdrcOptions[] = {
    {.name = "fdrc-tmax",
     .type = OptionType::Duration,
     .defaultValue = "2",
     .help = "maximum predicted wait; a flow silent past it is presumed dead",
     .min = 0.001,
     .max = 60},
};
}  // namespace

template <unsigned L>
class FdrcPolicy final : public PolicyBase<FdrcPolicy<L>> {
public:
    static constexpr std::string_view kName = "fdrc";
    struct RowState {};
    struct SlotMeta {
        std::uint32_t next = 0;      ///< predicted next packet, µs of packet time mod 2^32
        std::uint32_t interval = 0;  ///< µs; 0 = frozen (presumed dead)
    };
    using Row = RowRef<FdrcPolicy, L>;
    using ConstRow = ConstRowRef<FdrcPolicy, L>;

    explicit FdrcPolicy(const Options& options)
        : m_tmax(static_cast<std::uint32_t>(options.getDurationNs("fdrc-tmax") / 1000)) {}

    void onHit(Row row, Slot s, const PacketContext& ctx) noexcept {
        SlotMeta& m = row.meta(s);
        const std::uint32_t now = micros(ctx.ts);
        age(m, now);
        const TimeNs last =
            row.lastSeen(s);  // the flow's previous packet (updated after this hook)
        if (ctx.ts > last) {
            const TimeNs gap = (ctx.ts - last) / 1000;
            m.interval = gap >= m_tmax
                             ? m_tmax
                             : std::max<std::uint32_t>(1, static_cast<std::uint32_t>(gap));
            m.next = now + m.interval;
        }
    }
    void onInsert(Row row, Slot s, const PacketContext& ctx, Vacancy) noexcept {
        row.meta(s) = {micros(ctx.ts) + m_tmax, m_tmax};
    }
    void onErase(Row, Slot, EndReason) noexcept {}
    Slot victim(ConstRow row, const PacketContext& ctx) const noexcept {
        if (ctx.packet == nullptr) {  // a prefetch hint (no packet, no time): skip the aging
            Slot guess = 0;
            for (Slot s = 1; s < Slot{L}; ++s) {
                if (row.meta(s).interval == 0 ||
                    static_cast<std::int32_t>(row.meta(s).next - row.meta(guess).next) > 0)
                    guess = s;
            }
            return guess;
        }
        const std::uint32_t now = micros(ctx.ts);
        Slot best = 0;
        std::uint64_t bestWait = 0;
        for (Slot s = 0; s < Slot{L}; ++s) {
            SlotMeta m = row.meta(s);
            age(m, now);
            const std::uint64_t wait = predictedWait(m, now);
            if (wait > bestWait || s == 0) {
                best = s;
                bestWait = wait;
            }
        }
        return best;
    }

    /// Frozen flows rank above any live prediction.
    std::uint64_t predictedWait(const SlotMeta& m, std::uint32_t now) const noexcept {
        if (m.interval == 0) return std::uint64_t{m_tmax} + 1;
        const auto ahead = static_cast<std::int32_t>(m.next - now);
        return ahead > 0 ? static_cast<std::uint64_t>(ahead) : 0;
    }

    char segmentOf(ConstRow row, Slot s) const noexcept {
        return row.occupied(s) && row.meta(s).interval == 0 ? 'F' : ' ';
    }
    std::string checkRow(ConstRow row) const {
        for (Slot s = 0; s < Slot{L}; ++s) {
            if (row.occupied(s) && row.meta(s).interval > m_tmax)
                return "interval above Tmax in slot " + std::to_string(s);
        }
        return {};
    }

private:
    static std::uint32_t micros(TimeNs ts) noexcept {
        return static_cast<std::uint32_t>(ts / 1000);
    }
    static bool reached(std::uint32_t now, std::uint32_t next) noexcept {
        return static_cast<std::int32_t>(now - next) >= 0;
    }

    void age(SlotMeta& m, std::uint32_t now) const noexcept {
        if (m.interval == 0) return;
        while (reached(now, m.next) && m.interval < m_tmax) {
            m.interval = std::min(2 * m.interval, m_tmax);
            m.next += m.interval;
        }
        if (m.interval == m_tmax && reached(now, m.next)) m.interval = 0;
    }

    std::uint32_t m_tmax;  ///< µs
};

ROWPROBE_REGISTER_ROW_POLICY(FdrcPolicy,
                             "flow-driven rule caching: evict the flow whose next packet is "
                             "predicted furthest away (Li et al. 2015)",
                             kFdrcOptions);

}  // namespace rowprobe::storage
