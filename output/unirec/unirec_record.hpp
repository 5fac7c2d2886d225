// UniRec records (NEMEA), written without libunirec (docs/design/wire-formats.md).
//
// A UniRec template is a set of (type, NAME) fields. Receivers lay a record out by sorting the
// fields by "sort size" descending (16, 8, 6, 4, 2, 1 for fixed types, then -1, -2, -4, -6,
// -8, -16 for variable ones) and then by name (strcmp):
//
//   record := fixed part (static size)                             | variable part
//             [ipaddr DST_IP 16][ipaddr SRC_IP 16][uint64 ...] ...  [slot][slot] | data data ...
//                                                                   slot = u16 offset, u16 length
//
// * Fixed values are little-endian (host order on NEMEA's x86 hosts), no padding.
// * A variable field's slot holds the offset of its data counted from the END of the fixed
//   part, and its length in bytes; data are packed in slot order.
// * ipaddr: IPv6 as 16 network-order bytes; IPv4 as 8 zero bytes, the address, FF FF FF FF.
// * time: u64, seconds << 32 | fraction in 2^-32 s.
// The data format specifier sent in the TRAP hello lists the fields in this layout order:
// "ipaddr DST_IP,ipaddr SRC_IP,uint64 BYTES,...".
//
// UnirecLayout is the generic part (any field types, used for the golden vectors and by future
// process-plugin fields); UnirecEncoder compiles a layout of FieldSpecs (fields.hpp) into
// (source offset, conversion, destination offset) steps, once, and fills records from
// FlowRecords with no allocation.
//
// Thread ownership: built at start-up, then used by the export thread only.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rowprobe/fields.hpp"
#include "rowprobe/flow_record.hpp"

namespace rowprobe::output {

/// Properties of a UniRec type string ("uint16", "ipaddr", "uint16*", "string", ...).
struct UnirecType {
    std::string_view name;
    int sortSize = 0;  ///< >0 fixed size; <0 variable with element size -sortSize
    bool known = false;
};
UnirecType unirecType(std::string_view typeName) noexcept;

/// time (32.32 fixed point) from nanoseconds since the epoch, as ipfixprobe's
/// ur_time_from_sec_usec generalised to ns: frac = (nsec * 0x44B82FA0A) >> 32.
std::uint64_t unirecTimeFromNs(TimeNs t) noexcept;

class UnirecLayout {
public:
    struct Field {
        std::string name;
        std::string type;
        int sortSize = 0;
        std::size_t offset = 0;  ///< fixed value or, for variable fields, the 4-byte slot
        bool variable() const noexcept { return sortSize < 0; }
        std::size_t size() const noexcept {
            return variable() ? 4 : static_cast<std::size_t>(sortSize);
        }
    };

    /// Sorts `fields` (type, name) as receivers do. Throws std::invalid_argument on an unknown
    /// type, a malformed or duplicate name.
    explicit UnirecLayout(const std::vector<std::pair<std::string, std::string>>& fields);

    /// "type NAME,type NAME,..." in layout order, no spaces around commas, no NUL.
    const std::string& specifier() const noexcept { return m_specifier; }
    std::size_t staticSize() const noexcept { return m_staticSize; }
    std::span<const Field> fields() const noexcept { return m_fields; }
    /// Index of `name` in fields(), or -1.
    int find(std::string_view name) const noexcept;

private:
    std::vector<Field> m_fields;
    std::string m_specifier;
    std::size_t m_staticSize = 0;
};

/// Builds one record of a layout from raw field values (generic, allocation at construction
/// only). Fixed values are given already encoded (little-endian etc.); variable ones as bytes.
class UnirecRecordBuilder {
public:
    explicit UnirecRecordBuilder(const UnirecLayout& layout);
    void setFixed(std::string_view name, std::span<const std::uint8_t> encoded);
    void setVariable(std::string_view name, std::span<const std::uint8_t> data);
    /// The record: fixed part with slots, then variable data in slot order.
    std::vector<std::uint8_t> build() const;

private:
    const UnirecLayout& m_layout;
    std::vector<std::uint8_t> m_fixed;
    std::vector<std::vector<std::uint8_t>> m_variable;  ///< per field index
};

/// The UniRec fields of one process plugin in an interface's template (a `p=` group member).
struct UnirecPluginFields {
    std::size_t plugin = 0;                ///< index in the -p list (PluginInstance::plugin)
    std::vector<const FieldSpec*> fields;  ///< origin Plugin, each with a UniRec name and type
};

/// Fills UniRec records of a layout made of FieldSpecs from FlowRecords, and, for templates
/// with process-plugin fields, from one instance per plugin.
class UnirecEncoder {
public:
    /// `fields` (core) must all have a UniRec name and type, and be fixed-size; `plugins` add
    /// their fields (any type the schema has: numbers, time, ipaddr, macaddr, float, string,
    /// bytes, arrays). Throws std::invalid_argument when a field has no UniRec name, a name is
    /// given twice, or a type cannot be encoded as its UniRec type.
    UnirecEncoder(std::span<const FieldSpec* const> fields, const ExportConstants& constants,
                  std::span<const UnirecPluginFields> plugins = {});

    const UnirecLayout& layout() const noexcept { return m_layout; }
    /// Size of the fixed part; the whole record without plugin variable fields.
    std::size_t recordSize() const noexcept { return m_layout.staticSize(); }
    /// Writes recordSize() bytes to `out` (core fields; plugin fields zero / empty).
    void encode(const FlowRecord& record, std::uint8_t* out) const noexcept;
    /// Writes a whole record: core fields from `record`, then each plugin's fields from
    /// `instances[i]` (the instance of plugins[i]; an empty span = absent: zero / empty).
    /// `out` must hold recordSize() + 65535 bytes. Returns the record size, or 0 when the
    /// variable part does not fit a UniRec record (65535 bytes).
    std::size_t encode(const FlowRecord& record,
                       std::span<const std::span<const std::uint8_t>> instances,
                       std::uint8_t* out) const noexcept;

private:
    enum class Op : std::uint8_t { IntLe, IpAddr, Copy, Time, Constant };
    struct Step {
        Op op = Op::IntLe;
        std::uint8_t sourceSize = 0;
        std::uint8_t size = 0;
        std::uint16_t source = 0;       ///< offset in FlowRecord
        std::uint16_t destination = 0;  ///< offset in the record
        std::uint64_t constant = 0;     ///< LE bytes of an exporter constant
    };
    /// A plugin field: a fixed value, or (variable) a slot whose data follows the fixed part
    /// in layout order.
    struct PluginStep {
        std::size_t plugin = 0;  ///< index into the instances given to encode()
        const FieldSpec* field = nullptr;
        std::uint16_t destination = 0;
        std::uint8_t size = 0;  ///< fixed: UniRec size; array: UniRec element size
        bool variable = false;
        bool time = false;  ///< Timestamp (TimeNs) -> UniRec time
    };
    UnirecLayout m_layout;
    std::vector<Step> m_steps;
    std::vector<PluginStep> m_pluginSteps;  ///< fixed ones first, then variable in slot order
};

/// Convenience: the FieldSpecs of a FieldId list.
std::vector<const FieldSpec*> fieldSpecs(std::span<const FieldId> ids);

}  // namespace rowprobe::output
