// Scripted tests per row policy on small rows (docs/writing-a-row-policy.md, "Testing"): a sequence
// of flows of one row, and the expected order, segments and victims after each step. Flows are
// named a, b,
// c ... by their index in the script; the row is shown front first as "flow+segment" items
// ("bA" = flow b in segment A, "-" = hole), in the policy's positions.
#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <random>

#include "table_harness.hpp"

namespace rowprobe::storage {
namespace {

using namespace rowprobe::storage::testing;

class Script {
public:
    Script(const std::string& plugin, std::size_t flows, std::size_t row = 9)
        : m_h(plugin), m_row(row), m_flows(m_h.flowsInRow(row, flows, at(0))) {}

    /// Feeds one packet of flow `name` ('a' + index) at time `t` seconds.
    Script& feed(char name, double t, std::uint8_t flags = 0) {
        ParsedPacket p = m_flows.at(static_cast<std::size_t>(name - 'a'));
        p.ts = at(t);
        p.tcpFlags = flags;
        m_h.feed(p);
        EXPECT_EQ(m_h.table().checkInvariants(), "") << "after " << name;
        return *this;
    }
    Script& feed(const std::string& names, double t) {
        for (char n : names) feed(n, t);
        return *this;
    }

    /// The row front first: position → "flow segment", trailing spaces trimmed; "-" = hole.
    std::string row() {
        std::vector<std::string> byPos(m_h.table().line(), "?");
        for (const SlotView& v : m_h.table().inspectRow(m_row)) {
            std::string item = "-";
            if (v.occupied) {
                item = std::string(1, nameOf(v.key)) + v.segment;
                while (!item.empty() && item.back() == ' ') item.pop_back();
            }
            byPos.at(v.position) = item;
        }
        std::string out;
        for (const auto& s : byPos) out += (out.empty() ? "" : " ") + s;
        return out;
    }

    /// Names of the flows exported for lack of resources so far, in order.
    std::string evicted() {
        std::string out;
        for (const auto& r : m_h.exportedWith(EndReason::LackOfResources)) {
            for (std::size_t i = 0; i < m_flows.size(); ++i) {
                if (m_flows[i].srcPort() == r.srcPort) out += static_cast<char>('a' + i);
            }
        }
        return out;
    }
    bool cached(char name) {
        return m_h.find(m_flows.at(static_cast<std::size_t>(name - 'a')).key).has_value();
    }
    TableHarness& harness() { return m_h; }

private:
    char nameOf(const FlowKey& key) const {
        for (std::size_t i = 0; i < m_flows.size(); ++i) {
            if (m_flows[i].key == key) return static_cast<char>('a' + i);
        }
        return '?';
    }

    TableHarness m_h;
    std::size_t m_row;
    std::vector<ParsedPacket> m_flows;
};

std::string plugin(const std::string& policy, unsigned line, const std::string& extra = "") {
    return "cache;size=8;seed=5;inactive=1000;active=5000;policy=" + policy +
           ";line=" + std::to_string(line) + extra;
}

// --- heap-lru ------------------------------------------------------------------------------

TEST(HeapLruPolicy, EvictsTheLeastRecentFlowAndInsertsNewFlowsAsMostRecent) {
    Script s(plugin("heap-lru", 4), 8);
    s.feed("abcd", 0).feed('a', 1).feed('c', 2);
    s.feed('e', 3);  // least recent: b
    EXPECT_EQ(s.evicted(), "b");
    s.feed('f', 4);               // d
    s.feed('e', 5).feed('g', 6);  // a (c, f, e are newer)
    EXPECT_EQ(s.evicted(), "bda");
    s.feed('h', 7);  // c
    EXPECT_EQ(s.evicted(), "bdac");
}

/// Exact LRU reference (new flows most recent) over one row: the eviction order must match.
TEST(HeapLruPolicy, MatchesAReferenceLruOnARandomScript) {
    for (unsigned line : {4U, 8U, 16U}) {
        Script s(plugin("heap-lru", line), line + 8);
        std::deque<char> lru;  // front = most recent
        std::string expected;
        std::mt19937 rng(line);
        for (int i = 0; i < 600; ++i) {
            const char f = static_cast<char>('a' + rng() % (line + 8));
            const auto it = std::find(lru.begin(), lru.end(), f);
            if (it != lru.end()) {
                lru.erase(it);
            } else if (lru.size() == line) {
                expected += lru.back();
                lru.pop_back();
            }
            lru.push_front(f);
            s.feed(f, i * 0.01);
        }
        EXPECT_EQ(s.evicted(), expected) << "line " << line;
    }
}

// --- 2q ------------------------------------------------------------------------------------

TEST(TwoQPolicy, NewFlowsEnterA1AndASecondHitPromotesToAm) {
    Script s(plugin("2q", 4), 8);  // Am at most 2 slots
    s.feed("abcd", 0);
    EXPECT_EQ(s.row(), "d1 c1 b1 a1");  // A1 is a FIFO, newest at its head
    s.feed('b', 1);                     // second packet: promoted
    EXPECT_EQ(s.row(), "bA d1 c1 a1");
    s.feed('b', 2);
    EXPECT_EQ(s.row(), "bA d1 c1 a1");
    s.feed('d', 3);
    EXPECT_EQ(s.row(), "dA bA c1 a1");
    s.feed('e', 4);  // full row: A1's tail leaves, the new flow enters A1's head
    EXPECT_EQ(s.evicted(), "a");
    EXPECT_EQ(s.row(), "dA bA e1 c1");
    s.feed('c', 5);  // Am full: its tail (b) is evicted to make room for the promotion
    EXPECT_EQ(s.evicted(), "ab");
    EXPECT_EQ(s.row(), "cA dA e1 -");
    s.feed('f', 6);  // the hole is used, no eviction
    EXPECT_EQ(s.row(), "cA dA f1 e1");
    EXPECT_EQ(s.evicted(), "ab");
}

TEST(TwoQPolicy, TheRatioOptionSizesAm) {
    Script s(plugin("2q", 4, ";2q-ratio=3:1"), 8);  // Am up to 3 slots
    s.feed("abcd", 0).feed("abc", 1);
    EXPECT_EQ(s.row(), "cA bA aA d1");
    EXPECT_EQ(s.evicted(), "");
    s.feed('d', 2);  // Am full: c... the Am tail (a) is evicted
    EXPECT_EQ(s.evicted(), "a");
    EXPECT_EQ(s.row(), "dA cA bA -");
}

// --- 2q-full -------------------------------------------------------------------------------

TEST(TwoQFullPolicy, A1inIsFifoA1outPromotesAndFullRowsEvictA1outsTail) {
    Script s(plugin("2q-full", 4), 8);  // 1:2:1 → A1in 1, A1out 2, Am 1
    s.feed("abcd", 0);
    EXPECT_EQ(s.row(), "dI cO bO aO");  // each new flow pushes A1in's oldest into A1out
    s.feed('d', 1);                     // hit in A1in: correlated, nothing moves
    EXPECT_EQ(s.row(), "dI cO bO aO");
    s.feed('b', 2);  // hit in A1out: promoted to Am
    EXPECT_EQ(s.row(), "dI cO aO bA");
    s.feed('e', 3);  // full: A1out's tail (a) leaves; e into A1in, d to A1out's head
    EXPECT_EQ(s.evicted(), "a");
    EXPECT_EQ(s.row(), "eI dO cO bA");
    s.feed('c', 4);  // promotion with Am full: Am's tail (b) is evicted first
    EXPECT_EQ(s.evicted(), "ab");
    EXPECT_EQ(s.row(), "eI dO cA -");
}

// --- 2q-ghost ------------------------------------------------------------------------------

TEST(TwoQGhostPolicy, AFlowEvictedFromA1inAndSeenAgainGoesToAm) {
    Script s(plugin("2q-ghost", 4), 8);  // Kin = 1
    s.feed("abcd", 0);
    EXPECT_EQ(s.row(), "dI cI bI aI");
    s.feed('e', 1);  // A1in over Kin: its tail (a) is evicted and remembered in A1out
    EXPECT_EQ(s.evicted(), "a");
    EXPECT_EQ(s.row(), "eI dI cI bI");
    s.feed('a', 2);  // a's ghost: straight to Am (b evicted from A1in)
    EXPECT_EQ(s.evicted(), "ab");
    EXPECT_EQ(s.row(), "aA eI dI cI");
    s.feed('e', 3);  // a hit in A1in does nothing
    EXPECT_EQ(s.row(), "aA eI dI cI");
    s.feed("fgh", 4);  // new flows churn A1in; Am's flow stays
    EXPECT_EQ(s.evicted(), "abcde");
    EXPECT_TRUE(s.cached('a'));
}

// --- lirs ----------------------------------------------------------------------------------

TEST(LirsPolicy, HirVictimsGhostsPromoteAndPruningDropsStaleHistory) {
    Script s(plugin("lirs", 4), 8);  // H = 1: three LIR flows, one resident HIR
    s.feed("abc", 0).feed('d', 1);
    std::string row = s.row();
    EXPECT_EQ(std::count(row.begin(), row.end(), 'L'), 3) << row;
    EXPECT_NE(row.find("dH"), std::string::npos) << row;
    s.feed('e', 2);  // victim: Q's head d, which stays in S as a ghost
    EXPECT_EQ(s.evicted(), "d");
    s.feed('d', 3);  // d's ghost: LIR; e (Q's head) leaves, a (bottom LIR) becomes HIR outside S
    EXPECT_EQ(s.evicted(), "de");
    row = s.row();
    EXPECT_NE(row.find("dL"), std::string::npos) << row;
    EXPECT_NE(row.find("ah"), std::string::npos) << row;
    s.feed('a', 4);  // HIR not in S: back into S, still HIR
    EXPECT_NE(s.row().find("aH"), std::string::npos) << s.row();
    // Stack (bottom first): b c [e ghost] d a. Hitting b then c makes d the bottom LIR, which
    // prunes e's ghost (older than d) but keeps a (newer).
    s.feed('b', 5).feed('c', 6);
    s.feed('e', 7);  // no ghost left: e is a HIR; victim a (Q's head), a leaves a ghost
    EXPECT_EQ(s.evicted(), "dea");
    EXPECT_NE(s.row().find("eH"), std::string::npos) << s.row();
}

TEST(LirsPolicy, WithoutPruningTheGhostWouldHaveMadeTheFlowLir) {
    Script s(plugin("lirs", 4), 8);
    s.feed("abc", 0).feed('d', 1).feed('e', 2);  // d evicted → ghost
    s.feed('d', 3);                              // e evicted → ghost (stamp newer than b, c)
    s.feed('e', 4);  // e's ghost is still in S (not older than the bottom LIR b): e becomes LIR
    EXPECT_NE(s.row().find("eL"), std::string::npos) << s.row();
}

// --- fdrc ----------------------------------------------------------------------------------

TEST(FdrcPolicy, EvictsTheFlowWhoseNextPacketIsPredictedFurthestAway) {
    Script s(plugin("fdrc", 4), 8);  // Tmax 2 s
    s.feed("abcd", 0);
    s.feed('a', 0.1);   // gap 0.1 s: next at 0.2
    s.feed('b', 0.15);  // next at 0.3
    s.feed('c', 0.5);   // next at 1.0
    // At 0.6: a aged to next 0.8 (wait 0.2), b to 1.2 (0.6), c waits 0.4, d (created, never
    // seen again) waits until 2.0 (1.4): d is the victim.
    s.feed('e', 0.6);
    EXPECT_EQ(s.evicted(), "d");
    // At 2.5 a, b and c have been silent beyond their predictions up to Tmax: frozen, and
    // frozen flows go before e (created at 0.6, next at 2.6).
    s.feed('f', 2.5);
    EXPECT_EQ(s.evicted().size(), 2U);
    EXPECT_NE(s.evicted()[1], 'e');
    EXPECT_TRUE(s.cached('e'));
}

TEST(FdrcPolicy, TheTmaxOptionIsValidated) {
    EXPECT_THROW(TableHarness(plugin("fdrc", 4, ";fdrc-tmax=90")), ConfigError);
    EXPECT_NO_THROW(TableHarness(plugin("fdrc", 4, ";fdrc-tmax=500ms")));
}

// --- lru-2 ---------------------------------------------------------------------------------

TEST(Lru2Policy, FlowsSeenOnceGoFirstThenTheOldestPenultimatePacket) {
    Script s(plugin("lru-2", 4), 8);
    s.feed("abcd", 0).feed('a', 1).feed('b', 2);
    s.feed('e', 3);  // seen once: c, d (and none else) → the older last packet: c
    EXPECT_EQ(s.evicted(), "c");
    s.feed('d', 4).feed('e', 5);  // now every flow was seen twice
    // penultimate packets: a@a's 1st, b@b's 1st, d@d's 1st (all at step 0..3), e@3: the oldest
    // penultimate reference is a's first packet.
    s.feed('f', 6);
    EXPECT_EQ(s.evicted(), "ca");
    s.feed('g', 7);  // f seen once → f goes first
    EXPECT_EQ(s.evicted(), "caf");
}

TEST(Lru2Policy, MatchesAReferenceLru2OnARandomScript) {
    for (unsigned line : {4U, 8U, 16U}) {
        Script s(plugin("lru-2", line), line + 8);
        std::map<char, std::pair<long, long>> cached;  // flow → (last, penultimate or -1)
        std::string expected;
        std::mt19937 rng(line + 100);
        for (long i = 0; i < 600; ++i) {
            const char f = static_cast<char>('a' + rng() % (line + 8));
            if (auto it = cached.find(f); it != cached.end()) {
                it->second = {i, it->second.first};
            } else {
                if (cached.size() == line) {
                    auto victim = cached.begin();
                    auto key = [](const std::pair<long, long>& m) {
                        return m.second < 0 ? std::pair<int, long>{0, m.first}
                                            : std::pair<int, long>{1, m.second};
                    };
                    for (auto c = cached.begin(); c != cached.end(); ++c) {
                        if (key(c->second) < key(victim->second)) victim = c;
                    }
                    expected += victim->first;
                    cached.erase(victim);
                }
                cached[f] = {i, -1};
            }
            s.feed(f, static_cast<double>(i) * 0.01);
        }
        EXPECT_EQ(s.evicted(), expected) << "line " << line;
    }
}

// --- s3-fifo -------------------------------------------------------------------------------

TEST(S3FifoPolicy, OneHitFlowsLeaveFromSmallAndHitFlowsMoveToMain) {
    Script s(plugin("s3-fifo", 8), 16);  // S: 1 slot (10 % of 8), ghosts 8
    s.feed("abcdefgh", 0);
    EXPECT_EQ(s.row(), "hS gS fS eS dS cS bS aS");  // a free row: everything enters S
    s.feed('a', 1).feed('b', 1);                    // hits only bump frequencies: nothing moves
    EXPECT_EQ(s.row(), "hS gS fS eS dS cS bS aS");
    // Full: S is over its share, so its tail is examined: a and b were hit → to M; c was not →
    // evicted (ghost).
    s.feed('i', 2);
    EXPECT_EQ(s.evicted(), "c");
    EXPECT_EQ(s.row(), "iS hS gS fS eS dS bM aM");
    s.feed('c', 3);  // c's ghost: straight to M's head; d evicted from S
    EXPECT_EQ(s.evicted(), "cd");
    EXPECT_EQ(s.row(), "iS hS gS fS eS cM bM aM");
}

TEST(S3FifoPolicy, MainIsAClockThatSparesFlowsWithHits) {
    Script s(plugin("s3-fifo", 4, ";s3-small=25"), 12);  // S: 1 slot
    s.feed("abcd", 0).feed("abc", 1).feed('a', 1.5);     // a hit twice, b and c once
    s.feed('e', 2);  // S's tail a → M, b → M, c → M (hit at least once), d (no hit) evicted
    EXPECT_EQ(s.evicted(), "d");
    EXPECT_EQ(s.row(), "eS cM bM aM");
    s.feed('f', 3);  // S at its share (1): its tail e has no hit → evicted
    EXPECT_EQ(s.evicted(), "de");
    // f hit → promoted to M; then the CLOCK over M: every flow spends one hit per pass, a had
    // two, so b is the first to reach zero.
    s.feed('f', 4).feed('g', 5);
    EXPECT_EQ(s.evicted(), "deb");
    EXPECT_TRUE(s.cached('a'));
}

}  // namespace
}  // namespace rowprobe::storage
