// s3-fifo: S3-FIFO inside one row — a modern policy none of the thesis ancestors offers.
//
// Source: J. Yang, Y. Zhang, Z. Qiu, Y. Yue, K. V. Rashmi, "FIFO queues are all you need for
// cache eviction", SOSP 2023. Three FIFO queues: a small queue S (10 % of the space) that new
// objects enter, a main queue M, and a ghost queue G of recently evicted identities. A hit only
// bumps a 2-bit frequency (no reordering: hits are cheap). Evicting from S moves objects that
// were hit at least once to M and drops the others into G ("quick demotion": most one-hit
// wonders leave after a short probation); evicting from M reinserts objects with a non-zero
// frequency at M's head, decrementing it (CLOCK-like). A new object found in G goes straight to
// M. Flow caches see the same skew the paper targets: most flows are tiny (scans, DNS, probes)
// and the few heavy ones carry most packets (docs/policies.md has the numbers).
//
// Row-local form. One rank order per row:
//
//   rank:  0 ......... small-1 | small ........ used-1 | used ... L-1     ghosts: <= 8 fragments
//          S (FIFO, head 0)     | M (FIFO, head small)  | holes           freq: 2 bits per slot
//
// * S's share: option s3-small (% of L, default 10, at least one slot). G holds at most
//   s3-ghosts fragments (default 8; hash bits 32..47, policy_util.hpp).
// * Hit: freq = min(freq + 1, 3). Nothing moves.
// * New flow: its ghost in G → M's head (ghost removed); else S's head. freq = 0.
// * Full row, the paper's eviction loop: while S holds at least its share (or M is empty), look
//   at S's tail: freq >= 1 → it becomes M's head (a boundary shift, nothing moves), else it is
//   the victim and leaves a ghost. Otherwise look at M's tail: freq > 0 → freq - 1 and to M's
//   head, else it is the victim. Ends within L·4 steps.
//   victim() runs this loop on a copy of RowState (RowState is trivially copyable, <= 64 bytes)
//   and returns the slot; onErase(LackOfResources) runs the same loop on the real state, so the
//   moves happen exactly once and only for real evictions.
// * Holes compact to the tail. Timeouts leave no ghost.
// Costs: hit = one 2-bit update in RowState (cheaper than lru's rotation); eviction a few
// rotations; RowState 8 rank bytes (32 for L = 32) + 8 freq bytes + 17 ghost bytes + counters.
#include <algorithm>
#include <string>

#include "cache/policy_registry.hpp"
#include "cache/rank_order.hpp"
#include "cache/row_policy.hpp"
#include "policy_util.hpp"

namespace rowprobe::storage {

namespace {
constexpr OptionSpec kS3FifoOptions[] = {
    {.name = "s3-small",
     .type = OptionType::Int,
     .defaultValue = "10",
     .help = "share of a row for the small probation FIFO S, in % (at least one slot)",
     .min = 1,
     .max = 90},
    {.name = "s3-ghosts",
     .type = OptionType::Int,
     .defaultValue = "8",
     .help = "ghost fragments of flows evicted from S, per row",
     .min = 0,
     .max = 8},
};
}  // namespace

template <unsigned L>
class S3FifoPolicy final : public PolicyBase<S3FifoPolicy<L>> {
public:
    static constexpr std::string_view kName = "s3-fifo";
    struct RowState {
        RankOrder<L> order;
        std::uint64_t freq = 0;       ///< 2 bits per slot
        policy::GhostFifo<8> ghosts;  ///< G
        std::uint8_t small = 0;       ///< flows in S (ranks [0, small))
        std::uint8_t used = 0;        ///< flows in the row
    };
    struct SlotMeta {};
    using Row = RowRef<S3FifoPolicy, L>;
    using ConstRow = ConstRowRef<S3FifoPolicy, L>;

    explicit S3FifoPolicy(const Options& options)
        : m_smallMax(std::max(1U, static_cast<unsigned>(options.getInt("s3-small")) * L / 100U)),
          m_ghostCap(static_cast<unsigned>(options.getInt("s3-ghosts"))) {}

    void onHit(Row row, Slot s, const PacketContext&) noexcept {
        RowState& st = row.state();
        const unsigned f = freqOf(st, s);
        setFreq(st, s, f + (f < 3 ? 1U : 0U));
    }
    void onInsert(Row row, Slot s, const PacketContext& ctx, Vacancy) noexcept {
        RowState& st = row.state();
        setFreq(st, s, 0);
        ++st.used;
        if (st.ghosts.take(policy::ghostFragment(ctx.hash))) {
            st.order.moveTo(s, st.small);  // M's head
        } else {
            st.order.moveTo(s, 0);  // S's head
            ++st.small;
        }
    }
    void onErase(Row row, Slot s, EndReason why) noexcept {
        RowState& st = row.state();
        if (why == EndReason::LackOfResources) {
            const Eviction e = evict(st);  // the same choice victim() made, now applied
            if (e.fromSmall) st.ghosts.push(policy::ghostFragment(row.hash(s)), m_ghostCap);
        }
        if (st.order.rankOf(s) < st.small) --st.small;
        --st.used;
        setFreq(st, s, 0);
        st.order.moveTo(s, L - 1);
    }
    Slot victim(ConstRow row, const PacketContext&) const noexcept {
        RowState copy = row.state();
        return evict(copy).slot;
    }

    char segmentOf(ConstRow row, Slot s) const noexcept {
        const RowState& st = row.state();
        const unsigned r = st.order.rankOf(s);
        return r < st.small ? 'S' : r < st.used ? 'M' : ' ';
    }
    std::string checkRow(ConstRow row) const {
        const RowState& st = row.state();
        if (st.small > st.used) return "S larger than the row";
        if (st.ghosts.count > m_ghostCap) return "more ghosts than allowed";
        for (unsigned r = 0; r < L; ++r) {
            const Slot s = st.order.at(r);
            if (row.occupied(s) != (r < st.used))
                return "rank " + std::to_string(r) + ": holes are not at the tail";
            if (!row.occupied(s) && freqOf(st, s) != 0) return "frequency on a free slot";
        }
        return {};
    }

private:
    struct Eviction {
        Slot slot;
        bool fromSmall;
    };

    static unsigned freqOf(const RowState& st, Slot s) noexcept {
        return static_cast<unsigned>((st.freq >> (2 * s)) & 3U);
    }
    static void setFreq(RowState& st, Slot s, unsigned f) noexcept {
        st.freq = (st.freq & ~(std::uint64_t{3} << (2 * s))) | (std::uint64_t{f} << (2 * s));
    }

    /// The paper's eviction loop on a full row; leaves the victim in place (its segment counts
    /// unchanged) and returns it. Every other effect (promotions, reinsertions, decrements) is
    /// applied to `st`.
    Eviction evict(RowState& st) const noexcept {
        for (;;) {
            if (st.small > 0 && (st.small >= m_smallMax || st.small == st.used)) {
                const Slot t = st.order.at(st.small - 1U);  // S's tail
                if (freqOf(st, t) == 0) return {t, true};
                --st.small;  // promoted: S's tail is M's head already
                continue;
            }
            const Slot t = st.order.at(st.used - 1U);  // M's tail
            const unsigned f = freqOf(st, t);
            if (f == 0) return {t, false};
            setFreq(st, t, f - 1);
            st.order.moveTo(t, st.small);  // reinserted at M's head
        }
    }

    unsigned m_smallMax;
    unsigned m_ghostCap;
};

ROWPROBE_REGISTER_ROW_POLICY(S3FifoPolicy,
                             "S3-FIFO: small probation FIFO, main FIFO with 2-bit frequencies, "
                             "ghosts (Yang et al. SOSP 2023)",
                             kS3FifoOptions);

}  // namespace rowprobe::storage
