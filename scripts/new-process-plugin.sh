#!/usr/bin/env bash
# Writes the skeleton of a new process plugin NAME, in rowprobe's layout, ready to build:
#
#   process/NAME/CMakeLists.txt          parser library rp_NAME_parser + plugin rp_process_NAME
#   process/NAME/NAME_parser.hpp, .cpp   the pure parser (bounds-checked, no allocation)
#   process/NAME/NAME_plugin.cpp         the glue: State, hooks, fields, registration
#   process/NAME/README.md               what it exports (fields table) and its differences
#   tests/unit/process/NAME_parser_test.cpp   unit tests of the parser (test_process)
#   tests/fuzz/NAME_parser_fuzz.cpp      libFuzzer target of the parser (tests/fuzz, clang)
#   tests/fuzz/corpus/NAME_parser_fuzz/seed1
#
# The skeleton is a working plugin: it records the length and the first bytes of each flow's
# first payload (tier-1 state, then kDone) and exports them. Replace the parser and the fields
# with yours; docs/writing-a-process-plugin.md says what else to update (plugin-strings.md, the
# man page, the README's plugin table, a reference test) and how to choose IPFIX elements.
# Nothing existing is edited: CMake finds the new folder, the parser library joins
# test_process through the ROWPROBE_PROCESS_PARSER_LIBS property and tests/fuzz picks up every
# *_parser_fuzz.cpp whose plugin folder has NAME_parser.cpp.
#
# Usage: scripts/new-process-plugin.sh [--root DIR] NAME
#   NAME   lower case letters and digits, starting with a letter (the -p name, the folder,
#          the C++ namespace rowprobe::NAME)
#   --root write into DIR instead of this checkout (tests use a scratch tree)
# Exit codes: 0 written, 2 bad usage or NAME (invalid, a C++ keyword, or the folder exists).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
name=""
while [[ $# -gt 0 ]]; do
    case $1 in
        --root)
            [[ $# -ge 2 ]] || { echo "new-process-plugin: --root needs a directory" >&2; exit 2; }
            root=$2
            shift 2
            ;;
        -h | --help)
            sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'
            exit 0
            ;;
        -*)
            echo "new-process-plugin: unknown option '$1' (allowed: --root DIR, --help)" >&2
            exit 2
            ;;
        *)
            [[ -z $name ]] || { echo "new-process-plugin: one NAME only (got '$name' and '$1')" >&2; exit 2; }
            name=$1
            shift
            ;;
    esac
done

if [[ -z $name ]]; then
    echo "usage: scripts/new-process-plugin.sh [--root DIR] NAME" >&2
    exit 2
fi
if [[ ! $name =~ ^[a-z][a-z0-9]{0,23}$ ]]; then
    echo "new-process-plugin: NAME '$name' is not allowed: lower case letters and digits," \
        "starting with a letter, at most 24 characters (e.g. 'smtp', 'quic2')" >&2
    exit 2
fi
case " alignas alignof and asm auto bool break case catch char class const constexpr continue
       default delete do double else enum explicit export extern false float for friend goto if
       inline int long mutable namespace new noexcept not nullptr operator or private protected
       public register requires return short signed sizeof static struct switch template this
       throw true try typedef typeid typename union unsigned using virtual void volatile while
       xor common " in
    *" $name "*)
        echo "new-process-plugin: NAME '$name' is a C++ keyword or a reserved folder" \
            "(process/common holds shared libraries); pick another" >&2
        exit 2
        ;;
esac
dir="$root/process/$name"
if [[ -e $dir ]]; then
    echo "new-process-plugin: $dir exists already; pick another NAME" >&2
    exit 2
fi
for d in "$root/process" "$root/tests/unit/process" "$root/tests/fuzz"; do
    [[ -d $d ]] || { echo "new-process-plugin: $d is missing: --root must be a rowprobe tree" >&2; exit 2; }
done

class="$(tr '[:lower:]' '[:upper:]' <<<"${name:0:1}")${name:1}"
upper="$(tr '[:lower:]' '[:upper:]' <<<"$name")"
fill() { sed -e "s/@name@/$name/g" -e "s/@Name@/$class/g" -e "s/@NAME@/$upper/g" >"$1"; }

mkdir -p "$dir" "$root/tests/fuzz/corpus/${name}_parser_fuzz"

fill "$dir/CMakeLists.txt" <<'EOF'
# The @name@ plugin's parser (pure; unit-tested in tests/unit/process, fuzzed in tests/fuzz).
add_library(rp_@name@_parser STATIC @name@_parser.cpp)
target_include_directories(rp_@name@_parser PUBLIC ${PROJECT_SOURCE_DIR})
set_property(GLOBAL APPEND PROPERTY ROWPROBE_PROCESS_PARSER_LIBS rp_@name@_parser)

rowprobe_add_plugin(rp_process_@name@ @name@_plugin.cpp)
target_link_libraries(rp_process_@name@ PUBLIC rp_@name@_parser)
EOF

fill "$dir/${name}_parser.hpp" <<'EOF'
// The @name@ parser: what the plugin keeps of a payload, as a pure function of the bytes
// (no flow, no plugin API), so that it is unit-tested and fuzzed on its own.
//
// Skeleton: the payload's length (saturated to 16 bits) and its first kPrefixBytes bytes.
// Replace it with the protocol's parser; keep the rules: read only inside `payload`, never
// allocate, never throw, return "not recognised" for anything malformed.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace rowprobe::@name@ {

/// Bytes of the payload kept per flow.
inline constexpr std::size_t kPrefixBytes = 8;

/// What the plugin keeps of one payload (trivially copyable: it lives in the flow's state).
struct PayloadSummary {
    std::uint16_t length = 0;  ///< payload bytes, saturated at 65535
    std::uint8_t prefixLen = 0;
    std::array<std::uint8_t, kPrefixBytes> prefix{};
};

/// The summary of a non-empty payload; nothing for an empty one.
std::optional<PayloadSummary> summarizePayload(std::span<const std::uint8_t> payload) noexcept;

}  // namespace rowprobe::@name@
EOF

fill "$dir/${name}_parser.cpp" <<'EOF'
#include "process/@name@/@name@_parser.hpp"

#include <algorithm>
#include <limits>

namespace rowprobe::@name@ {

std::optional<PayloadSummary> summarizePayload(std::span<const std::uint8_t> payload) noexcept {
    if (payload.empty()) return std::nullopt;
    PayloadSummary s;
    s.length = static_cast<std::uint16_t>(
        std::min<std::size_t>(payload.size(), std::numeric_limits<std::uint16_t>::max()));
    s.prefixLen = static_cast<std::uint8_t>(std::min(payload.size(), kPrefixBytes));
    std::copy_n(payload.begin(), s.prefixLen, s.prefix.begin());
    return s;
}

}  // namespace rowprobe::@name@
EOF

fill "$dir/${name}_plugin.cpp" <<'EOF'
// The "@name@" process plugin: the length and first bytes of each flow's first payload, in
// the initiator's or the responder's direction, whichever sends data first. Tier-1 state only
// (no tier-2 record); the plugin returns kDone once it has the payload, so later packets of the
// flow cost it nothing. The parser is @name@_parser.hpp; the fields table is README.md.
#include <cstddef>
#include <cstdint>

#include "process/@name@/@name@_parser.hpp"
#include "rowprobe/process.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::@name@ {

namespace {

struct Fields {
    std::uint16_t length;
    std::uint8_t fromInitiator;
    VarRef prefix;
};

// No IPFIX element yet (id 0: the field is left out of IPFIX templates, the other outputs
// carry it); docs/writing-a-process-plugin.md, "Choosing IPFIX elements", says how to pick one.
constexpr FieldSpec kFields[] = {
    {.name = "@name@_payload_length",
     .description = "length of the flow's first payload (bytes, at most 65535)",
     .type = FieldType::Unsigned16,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, length),
     .ipfix = {kPenIana, 0, 2},
     .unirec = {"@NAME@_PAYLOAD_LENGTH", "uint16"}},
    {.name = "@name@_payload_from_initiator",
     .description = "1 when the first payload went initiator -> responder, else 0",
     .type = FieldType::Unsigned8,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, fromInitiator),
     .ipfix = {kPenIana, 0, 1},
     .unirec = {"@NAME@_PAYLOAD_FROM_INITIATOR", "uint8"}},
    {.name = "@name@_payload_prefix",
     .description = "the first payload's first 8 bytes",
     .type = FieldType::Binary,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(Fields, prefix),
     .ipfix = {kPenIana, 0, kIpfixVarLen},
     .unirec = {"@NAME@_PAYLOAD_PREFIX", "bytes"}},
};

class @Name@Plugin final : public ProcessPluginBase<@Name@Plugin> {
public:
    struct State {
        PayloadSummary summary;
        bool seen;
        bool fromInitiator;
    };

    explicit @Name@Plugin(const Options& /*options*/) {}
    std::string_view name() const noexcept override { return "@name@"; }
    std::span<const FieldSpec> fields() const noexcept override { return kFields; }

    HookResult postCreate(FlowContext& ctx) const noexcept { return take(ctx); }
    HookResult postUpdate(FlowContext& ctx) const noexcept { return take(ctx); }

    void write(FlowContext& ctx, InstanceWriter& out) const noexcept {
        const State& st = ctx.stateAs<State>();
        if (!st.seen) return;  // no payload in this flow: no instance
        Fields* f = out.begin<Fields>();
        if (f == nullptr) return;  // the record's plugin data is full
        f->length = st.summary.length;
        f->fromInitiator = st.fromInitiator ? 1 : 0;
        f->prefix = out.appendBytes(st.summary.prefix.data(), st.summary.prefixLen);
        out.commit();
    }

private:
    static HookResult take(FlowContext& ctx) noexcept {
        const auto summary = summarizePayload(ctx.packet->payload());
        if (!summary) return kContinue;
        State& st = ctx.stateAs<State>();
        st.summary = *summary;
        st.seen = true;
        st.fromInitiator = ctx.forward;
        return kDone;
    }
};

}  // namespace

ROWPROBE_REGISTER_PLUGIN(PluginKind::Process, @Name@Plugin,
                         {.name = "@name@",
                          .summary = "length and first bytes of the flow's first payload"});

}  // namespace rowprobe::@name@
EOF

fill "$dir/README.md" <<'EOF'
# `@name@` process plugin

`-p @name@` records the length and the first 8 bytes of each flow's first payload, and which
side sent it. It keeps 12 bytes of tier-1 state per flow and stops looking at the flow's
packets once it has them (`kDone`). Flows without payload get no instance (their records carry
no `@name@` fields).

| name | type | IPFIX (PEN/id) | UniRec | JSON key |
|---|---|---|---|---|
| `@name@_payload_length` | uint16 | not exported | `@NAME@_PAYLOAD_LENGTH` (uint16) | `@name@_payload_length` |
| `@name@_payload_from_initiator` | uint8 | not exported | `@NAME@_PAYLOAD_FROM_INITIATOR` (uint8) | `@name@_payload_from_initiator` |
| `@name@_payload_prefix` | bytes | not exported | `@NAME@_PAYLOAD_PREFIX` (bytes) | `@name@_payload_prefix` |

## Files

* `@name@_parser.hpp`, `@name@_parser.cpp`: the parser (library `rp_@name@_parser`), tested by
  `tests/unit/process/@name@_parser_test.cpp` and fuzzed by `tests/fuzz/@name@_parser_fuzz.cpp`.
* `@name@_plugin.cpp`: state, hooks, fields and registration.

## Differences from ipfixprobe

ipfixprobe has no such plugin.
EOF

fill "$root/tests/unit/process/${name}_parser_test.cpp" <<'EOF'
// The @name@ parser (process/@name@/@name@_parser.hpp) on hand-made payloads.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "process/@name@/@name@_parser.hpp"

namespace rowprobe::@name@ {
namespace {

TEST(@Name@Parser, EmptyPayloadIsNotSummarized) {
    EXPECT_FALSE(summarizePayload({}).has_value());
}

TEST(@Name@Parser, ShortPayloadIsKeptWhole) {
    const std::vector<std::uint8_t> p = {'G', 'E', 'T'};
    const auto s = summarizePayload(p);
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(s->length, 3);
    ASSERT_EQ(s->prefixLen, 3);
    EXPECT_EQ(s->prefix[0], 'G');
    EXPECT_EQ(s->prefix[2], 'T');
    EXPECT_EQ(s->prefix[3], 0) << "bytes past the payload stay zero";
}

TEST(@Name@Parser, LongPayloadKeepsItsPrefixAndSaturatesItsLength) {
    std::vector<std::uint8_t> p(70000);
    for (std::size_t i = 0; i < p.size(); ++i) p[i] = static_cast<std::uint8_t>(i);
    const auto s = summarizePayload(p);
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(s->length, 65535);
    ASSERT_EQ(s->prefixLen, kPrefixBytes);
    for (std::size_t i = 0; i < kPrefixBytes; ++i) EXPECT_EQ(s->prefix[i], i);
}

}  // namespace
}  // namespace rowprobe::@name@
EOF

fill "$root/tests/fuzz/${name}_parser_fuzz.cpp" <<'EOF'
// libFuzzer target for the @name@ parser: any byte string is summarized without reading past
// it, and the summary never claims more than it holds.
//
//   ./@name@_parser_fuzz -max_len=4096 corpus/@name@_parser_fuzz
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>

#include "process/@name@/@name@_parser.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    // An exact-size copy, so that ASan sees any read past the payload.
    const auto buf = std::make_unique<std::uint8_t[]>(size == 0 ? 1 : size);
    if (size != 0) std::memcpy(buf.get(), data, size);
    const auto s = rowprobe::@name@::summarizePayload(std::span<const std::uint8_t>(buf.get(), size));
    if (size == 0 && s) std::abort();
    if (size != 0 && (!s || s->prefixLen > rowprobe::@name@::kPrefixBytes || s->prefixLen > size ||
                      std::memcmp(s->prefix.data(), buf.get(), s->prefixLen) != 0))
        std::abort();
    return 0;
}
EOF
printf 'GET / HTTP/1.1\r\nHost: example.org\r\n\r\n' >"$root/tests/fuzz/corpus/${name}_parser_fuzz/seed1"

if command -v clang-format >/dev/null && [[ -f $root/.clang-format ]]; then
    (cd "$root" && clang-format -i "process/$name/${name}_parser.hpp" "process/$name/${name}_parser.cpp" \
        "process/$name/${name}_plugin.cpp" "tests/unit/process/${name}_parser_test.cpp" \
        "tests/fuzz/${name}_parser_fuzz.cpp")
fi

cat <<EOF
Wrote process/$name/ (CMakeLists.txt, ${name}_parser.hpp/.cpp, ${name}_plugin.cpp, README.md),
tests/unit/process/${name}_parser_test.cpp and tests/fuzz/${name}_parser_fuzz.cpp (+ corpus).
Next: re-run cmake, build, then (cd build/release && ctest -R ${class}Parser); see
docs/writing-a-process-plugin.md for the docs, tests and IPFIX elements to add.
EOF
