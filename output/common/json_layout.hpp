// The JSON object layout of a flow record: the core fields as precomputed columns
// (JsonLayout) and the process-plugin fields that follow them (JsonPluginColumns). Shared by
// every output that writes rowprobe's JSON objects (json, kafka format=json) so they write the
// same bytes; field names are a stable interface (output/json/README.md).
//
// Costs: hand-formatted into the caller's buffer (no snprintf, libc call or allocation per
// record): one switch per column on a kind resolved at start-up, keys copied with fixed-size
// moves. Plugin values: one call per value to the writer resolved for the field's type at
// start-up (jsonValueWriter), no switch per value; strings escaped (control characters and
// bytes >= 0x80 as \u00XX), binary data as lowercase hex, arrays as JSON arrays (timestamps as
// ISO strings), floats in their shortest exact form.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "rowprobe/fields.hpp"
#include "rowprobe/format.hpp"
#include "rowprobe/plugin.hpp"
#include "rowprobe/plugin_data.hpp"

namespace rowprobe::output {

/// Field lists whose objects could be longer than this are refused at start-up.
inline constexpr std::size_t kJsonLineLimit = std::size_t{64} << 10;

/// The columns of a JSON object, built once from the field schema (fields.hpp): each column is
/// a precomputed `,"name":` literal and the field to read, so formatting a record is one pass
/// over the columns with no lookup.
class JsonLayout {
public:
    explicit JsonLayout(std::span<const FieldId> ids);
    void add(const FieldSpec& spec);
    /// Writes one record as a JSON object followed by '\n'; returns the end.
    char* format(char* out, const FlowRecord& record) const noexcept;
    /// The same without the closing "}\n", so plugin fields can follow.
    char* formatOpen(char* out, const FlowRecord& record) const noexcept;
    /// Every core field of the record, in the documented order.
    static const JsonLayout& defaults();
    /// Upper bound of one formatted record including its newline (each value at most
    /// kMaxValue characters), so a caller can reserve room for any field list.
    std::size_t maxLine() const noexcept { return m_maxLine; }

    /// Longest value text: an IPv6 address with an embedded IPv4 one is 45, an ISO time 30,
    /// a 64-bit number 20, a MAC 17.
    static constexpr std::size_t kMaxValue = 48;

private:
    /// How a column's value is read and written, resolved once in add(): formatting a record
    /// is one switch per column on this, with no look at the FieldSpec.
    enum class Kind : std::uint8_t {
        U8,         ///< the FlowRecord's byte at `offset`, in decimal
        U16,        ///< likewise 16 bits
        U32,        ///< likewise 32 bits
        U64,        ///< likewise 64 bits
        Time,       ///< TimeNs at `offset`, ISO 8601 with 9 decimals
        Address,    ///< 16 bytes at `offset`, dotted quad or IPv6 (addressIsIpv4)
        Mac,        ///< 6 bytes at `offset`
        EndReason,  ///< written as its name ("inactive", ...)
        Other,      ///< any other field (not of the record): readUnsigned, as a number
    };
    struct Column {
        std::string key;  ///< `,"name":` (`{"name":` first), with the opening quote if quoted
        const FieldSpec* spec = nullptr;
        Kind kind = Kind::Other;
        std::uint16_t offset = 0;
        bool quoted = false;
    };
    std::vector<Column> m_columns;
    std::size_t m_maxLine = 3;  ///< "{}\n" of an empty object
};

/// The process-plugin fields of a JSON object, built once from the -p list: per plugin its
/// fields as columns, each with its precomputed `,"name":` key and its value's writer resolved
/// from its type (jsonValueWriter), so a value costs a fixed-size copy of the key and one call
/// with no dispatch on the type. Unsigned scalars and floats (counters, flowstats' statistics)
/// are written inline instead, the one-digit and whole values without any call, in the same
/// bytes as their writers (docs/performance.md, "Session 21"). Runs of 4 to 8 adjacent such
/// columns whose values lie within 64 bytes of the instance (flowstats' eight statistics of a
/// series, its eight flag counts of a direction) are checked first: when every byte of that
/// span is zero (a direction without packets, a UDP flow's TCP flag counts), the run's text,
/// built at start-up with each value 0, is copied whole (docs/performance.md, "Session 25").
/// A record with plugin data is written as one object per instance line of its InstanceGroups
/// (docs/design/process-runtime.md): object k holds the record's fields
/// (JsonLayout::formatOpen), then writeFields(k), then "}". Shared by the json and kafka
/// outputs so both write the same bytes.
class JsonPluginColumns {
public:
    /// How writeFields writes a column's value: inline for these types, else its writer.
    enum class Inline : std::uint8_t { None, U8, U16, U32, U64, F32 };

    JsonPluginColumns() = default;
    explicit JsonPluginColumns(std::span<const ProcessPlugin* const> plugins);

    bool empty() const noexcept { return m_plugins.empty(); }
    /// The length of the -p list (the plugin count InstanceGroups takes).
    std::size_t plugins() const noexcept { return m_plugins.size(); }
    /// Upper bound of one object of a record with these groups, including a trailing '\n'.
    std::size_t maxObject(const JsonLayout& layout, const InstanceGroups& groups) const noexcept;
    /// Appends the plugin fields of object `line` (0 <= line < groups.lines()).
    char* writeFields(char* out, const InstanceGroups& groups, std::size_t line) const noexcept;

private:
    /// Keys up to this long are copied with fixed-size moves of the whole padded array (the
    /// bytes past the key land in the room reserved for its value, which overwrites them).
    static constexpr std::size_t kShortKey = 48;
    struct Column {
        std::array<char, kShortKey> key{};  ///< `,"name":` padded with zeros, when it fits
        std::string longKey;                ///< `,"name":` when longer than kShortKey
        std::size_t keyLength = 0;
        JsonValueFn write = nullptr;
        const FieldSpec* spec = nullptr;
        std::uint16_t offset = 0;  ///< the value's offset in the instance (spec->offset)
        Inline kind = Inline::None;
        std::int16_t run = -1;  ///< at the first column of a zero run: its index in `runs`
    };
    /// Adjacent inline columns written at once when the bytes of their values are all zero.
    struct ZeroRun {
        std::uint16_t begin = 0;  ///< the span of the instance holding the run's values
        std::uint16_t end = 0;
        std::uint16_t columns = 0;
        std::uint16_t length = 0;  ///< of the text
        /// Each column's key followed by 0, padded with zeros to whole 32-byte blocks, which
        /// are copied whole: the bytes past `length` land in the room reserved for the run's
        /// values (maxObject: 64 per value), which the next key or value overwrites.
        std::string text;
    };
    struct Plugin {
        std::vector<Column> columns;
        std::vector<ZeroRun> runs;
    };
    static void findZeroRuns(Plugin& plugin);
    std::vector<Plugin> m_plugins;
    std::size_t m_keyBytes = 0;
    std::size_t m_fieldCount = 0;
};

}  // namespace rowprobe::output
