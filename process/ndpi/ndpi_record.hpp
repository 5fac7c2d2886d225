// What the ndpi plugin exports for one flow: the fixed export struct (NdpiFields), its FieldSpecs
// (JSON keys, UniRec names, IPFIX elements) and the serialisation of a finished FlowSlot into an
// InstanceWriter (writeInstance). Everything nDPI 4.2 leaves in the flow struct is read with
// bounds (strnlen on its fixed arrays; union members only for the protocol that owns them).
//
//   NdpiFields (fixed part, 16 bytes + 12 VarRefs)
//     appId, masterId u16   ndpi_protocol app/master ids of nDPI 4.2 (they change between nDPI
//                           versions: prefer the names)
//     riskMask u64          ndpi_risk bits
//     app, category, confidence, risks, host, userAgent, sshClient, sshServer,
//     bittorrentHash (20 bytes), dhcpFingerprint, dhcpClassIdent, l7ProtoName   VarRefs
//
// Thread ownership: called by whoever runs the plugin's write hook, with that thread's module.
// Costs: at export only: one ndpi_protocol2name, up to 63 risk names, a few short copies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "process/ndpi/ndpi_module.hpp"
#include "rowprobe/fields.hpp"
#include "rowprobe/plugin_data.hpp"

namespace rowprobe::ndpi {

struct NdpiFields {
    std::uint64_t riskMask;
    std::uint16_t appId;
    std::uint16_t masterId;
    VarRef app;
    VarRef l7ProtoName;
    VarRef category;
    VarRef confidence;
    VarRef risks;
    VarRef host;
    VarRef userAgent;
    VarRef sshClient;
    VarRef sshServer;
    VarRef bittorrentHash;
    VarRef dhcpFingerprint;
    VarRef dhcpClassIdent;
};

/// ntop's Private Enterprise Number (nProbe / ntopng information elements).
inline constexpr std::uint32_t kPenNtop = 35632;

/// The fields in IPFIX template order. Fields without a standard or ntop element have IPFIX id 0
/// (left out of IPFIX) unless the plugin's `pen=` option numbers them (withPen).
std::span<const FieldSpec> ndpiFields() noexcept;
/// Number of fields that get an element under `pen=`, and the element id of field i of
/// ndpiFields() under it (0 for the fields that keep their own element).
std::uint16_t operatorElementId(std::size_t field) noexcept;

/// The names of the risks set in `mask`, comma-separated (nDPI's names, e.g. "Known Protocol on
/// Non Standard Port,HTTP Numeric IP Address"), into `buf`; returns the length written.
std::size_t riskNames(std::uint64_t mask, std::span<char> buf) noexcept;

/// The Zeek service name (conn.log `service`) of a label nDPI found by inspection (confidence
/// DPI or DPI (cache); a guess by port or address is not a service), "" when Zeek has no
/// analyzer for the protocol or the label is a guess. The master protocol decides when there is
/// one ("TLS.Google" is `ssl`, "DNS.Google" `dns`), else the application. The table is in
/// process/ndpi/README.md.
std::string_view zeekService(const ndpi_protocol& p, ndpi_confidence_t confidence) noexcept;

/// Serialises the label of a finished flow (detected, given up or never fed). Writes nothing
/// when the flow has no label at all (slot == nullptr).
void writeInstance(DetectionModule& module, FlowSlot& slot, InstanceWriter& out) noexcept;

}  // namespace rowprobe::ndpi
