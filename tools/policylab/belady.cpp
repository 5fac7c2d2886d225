#include "belady.hpp"

#include <algorithm>

namespace rowprobe::lab {

namespace {

constexpr std::uint32_t kEmpty = UINT32_MAX;

struct Entry {
    std::uint32_t key = kEmpty;
    std::uint32_t next = kNoNext;
    TimeNs first = 0;
    TimeNs last = 0;
    std::uint32_t packets = 0;
};

}  // namespace

BeladyResult simulateBelady(const BeladyInput& in) {
    const Trace& trace = *in.trace;
    const Sessions& s = *in.sessions;
    const unsigned lineLen = in.line;
    std::vector<Entry> table(in.rows * lineLen);
    BeladyResult r;
    auto expired = [&](const Entry& e, TimeNs now) {
        return (now >= e.last && now - e.last >= in.inactive) ||
               (now >= e.first && now - e.first >= in.active);
    };
    auto expiresAt = [&](const Entry& e) {
        return std::min(e.last + in.inactive, e.first + in.active);
    };

    for (std::size_t i = 0; i < trace.packets.size(); ++i) {
        const std::uint32_t k = trace.keyId[i];
        const TimeNs ts = trace.packets[i].ts;
        Entry* row = &table[static_cast<std::size_t>(in.rowOfKey[k]) * lineLen];
        Entry* slot = nullptr;
        for (unsigned j = 0; j < lineLen; ++j) {
            if (row[j].key == k) {
                slot = &row[j];
                break;
            }
        }
        if (slot != nullptr && s.starts[i] == 0) {
            ++r.hits;
            slot->next = s.next[i];
            slot->last = std::max(slot->last, ts);
            ++slot->packets;
            continue;
        }
        if (slot != nullptr) slot->key = kEmpty;  // the previous flow of this key has ended
        if (s.starts[i] == 0) ++r.recreated;

        Entry* target = nullptr;
        for (unsigned j = 0; j < lineLen && target == nullptr; ++j) {
            if (row[j].key == kEmpty) target = &row[j];
        }
        if (target == nullptr) {
            for (unsigned j = 0; j < lineLen; ++j) {
                if (expired(row[j], ts)) {
                    row[j].key = kEmpty;
                    if (target == nullptr) target = &row[j];
                }
            }
        }
        if (target != nullptr) {
            ++r.missFree;
        } else {
            target = &row[0];
            for (unsigned j = 1; j < lineLen; ++j) {
                const Entry& e = row[j];
                if (e.next > target->next ||
                    (e.next == target->next && expiresAt(e) > expiresAt(*target))) {
                    target = &row[j];
                }
            }
            ++r.missEvict;
            if (target->next != kNoNext) {  // the flow had more packets to come
                ++r.cutEvict;
                if (in.topKey != nullptr && (*in.topKey)[target->key] != 0) ++r.hhEvict;
                if (target->packets >= in.bigPackets) ++r.bigEvict;
            }
        }
        *target = Entry{k, s.next[i], ts, ts, 1};
    }
    return r;
}

}  // namespace rowprobe::lab
