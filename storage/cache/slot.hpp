// Vocabulary shared by every flow-table header: slots, tags and the supported row lengths.
//
//   row r:  tag[0] tag[1] ... tag[L-1]      one byte per slot, 0 = empty
//           record[r*L + 0] ... record[r*L + L-1]
//
// A Slot names a physical place inside one row. Records and tags never move between slots; a
// row policy expresses its order as ranks over slots (rank_order.hpp). Header-only constants,
// no state, usable from any thread.
#pragma once

#include <cstdint>

namespace rowprobe::storage {

/// Physical slot inside a row, 0..L-1. Loops over a row are written
/// `for (Slot s = 0; s < Slot{L}; ++s)`: loop variable and bound have one type, and the braces
/// reject at compile time an L that a Slot cannot count past (the loop could never end).
using Slot = std::uint8_t;
/// "No slot": returned by pickFree when the row is full, by lookups that miss.
inline constexpr Slot kNoSlot = 0xFF;

/// One-byte fingerprint of a flow's hash kept per slot. 0 marks an empty slot, so a real tag
/// is never 0 (tagOf maps 0 to 1).
using Tag = std::uint8_t;
inline constexpr Tag kEmptyTag = 0;

/// The largest row the table supports: masks of matching slots fit one 32-bit word.
inline constexpr unsigned kMaxLine = 32;

/// True for the row lengths the `line` option accepts.
constexpr bool isSupportedLine(unsigned line) noexcept {
    return line == 4 || line == 8 || line == 16 || line == 32;
}

}  // namespace rowprobe::storage
