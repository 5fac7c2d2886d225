// NetBIOS Name Service (NBNS, port 137) first-name decoding, ipfixprobe 5.7's netbios
// semantics.
//
//   payload ─▶ 12-byte DNS-style header (question count ≥ 1)
//           ─▶ first question name: length byte 32, then 32 "half-ASCII" bytes
//              ('A' + high nibble, 'A' + low nibble) per character (RFC 1001 §14.1)
//           ─▶ 15 name characters (the NetBIOS name, space-padded) + 1 suffix byte
//
// The name is exported up to its first NUL byte (ipfixprobe hands a C string to its outputs).
// NbnsName is one exported instance; the plugin keeps one per NBNS packet of a flow.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace rowprobe::netbios {

struct NbnsName {
    char name[15] = {};
    std::uint8_t nameLen = 0;  ///< up to the first NUL, at most 15
    std::uint8_t suffix =
        0;  ///< the 16th character: the service type (0x00 workstation, 0x20 server, ...)
    std::string_view text() const noexcept { return {name, nameLen}; }
};

/// Decodes the first question name of an NBNS packet; false when the packet has no question,
/// the name is not 32 encoded bytes or the payload ends before it.
bool parseNbnsName(std::span<const std::uint8_t> payload, NbnsName& out) noexcept;

}  // namespace rowprobe::netbios
