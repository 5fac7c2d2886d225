// The `fields=` option of the ipfix and netflow9 outputs: which fields their templates carry.
//
//   fields=basic,vlan,http        tokens separated by commas, each one of
//     basic                       the output's default template (the list without fields=)
//     <core field>                a core field name, the json output's `fields=` vocabulary
//                                 (src_ip, bytes, ttl, ...), when this output can send it
//     <plugin> | <plugin field>   (ipfix only) a process plugin given with -p (all its fields)
//                                 or one of its fields (dns_name); checked once the plugins are
//                                 known, still at start-up
//
// The template keeps the output's own field order (the vocabulary's), not the list's: a
// collector sees the same element order for the same selection. Duplicates are allowed.
// Parsing is a pure function over the text (no Options, no registry) so the libFuzzer target
// (tests/fuzz/export_field_list_fuzz.cpp) and the property tests drive it directly.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rowprobe/fields.hpp"

namespace rowprobe::output {

struct ExportFieldList {
    std::vector<FieldId> core;        ///< the chosen core fields, in vocabulary order
    std::vector<std::string> others;  ///< tokens left for the process plugins to resolve
    std::string error;                ///< non-empty: why the list is refused
    std::string offending;            ///< the token the error is about
    std::vector<std::string> known;   ///< with an error: the names allowed here
};

/// Parses `list` against `vocabulary` (the core fields the output can send, in template
/// order) and `basic` (the default template, a subset of it). With `allowOthers`, a token that
/// is not a core field name and not `basic` goes to `others`; without, it is an error. A core
/// field that exists but is not in the vocabulary (bytes_rev for a uniflow template, queue) is
/// an error naming why. An empty list or token is an error; so is a list without any core field.
ExportFieldList parseExportFieldList(std::string_view list, std::span<const FieldId> vocabulary,
                                     std::span<const FieldId> basic, bool allowOthers);

/// The names `vocabulary` allows, `basic` first (for messages and "did you mean").
std::vector<std::string> exportFieldNames(std::span<const FieldId> vocabulary);

}  // namespace rowprobe::output
