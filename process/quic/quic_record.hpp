// The quic plugin's per-flow record and how one UDP datagram updates it: ipfixprobe 5.7's
// semantics (connection ids by direction, repeated Initials, multiplexing, Retry, 0-RTT,
// Version Negotiation), on top of a ClientHello reassembled from every client Initial, not
// just the first packet (see README for the differences and why).
//
//   datagram ──▶ long-header packets (coalesced: all of them) ──▶ packet-type bits, version,
//       │        connection ids, token length, 0-RTT count, server port
//       └─ client Initial ── decrypt (keys of the connection's first DCID, cached per flow)
//                 └─ CRYPTO frames ──▶ CryptoAssembly ──▶ ClientHello complete?
//                                        └─ tls::parseHandshake: SNI, ALPN, user agent
//                                           (transport parameter 0x3129), extensions, JA4
//                                        └─ Q050: parseChlo (SNI, UAID tags)
//   legacy gQUIC (Q024..Q046, gquic.hpp): cleartext stream-1 frames ──▶ the same assembly
//                                        └─ parseChlo: SNI, user agent
//   result: NotQuic (no record is attached for it) | Quic | Flush (Version Negotiation)
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "process/common/quic/crypto_assembly.hpp"
#include "process/common/quic/gquic.hpp"
#include "process/common/quic/quic_initial.hpp"
#include "process/common/tls/tls_parser.hpp"

namespace rowprobe::quic {

inline constexpr std::size_t kMaxPacketTypes = 30;  ///< QUIC_PACKETS entries (first packets)
inline constexpr std::size_t kMaxExtensions = 30;   ///< QUIC_TLS_EXT_TYPE / _LEN entries
inline constexpr std::size_t kTlsExtBytes = 1500;   ///< QUIC_TLS_EXT (ALPN + transport params)
inline constexpr std::size_t kCryptoCap = 4096;     ///< reassembled ClientHello bytes
inline constexpr std::uint64_t kNoToken = ~std::uint64_t{0};  ///< ipfixprobe's "unset" value

struct Cid {
    std::uint8_t len;
    std::array<std::uint8_t, kMaxCidLen> bytes;
    std::span<const std::uint8_t> view() const noexcept { return {bytes.data(), len}; }
    void set(std::span<const std::uint8_t> s) noexcept;
    bool equals(std::span<const std::uint8_t> s) const noexcept;
};

struct QuicRecord {
    std::uint32_t version;
    std::uint32_t clientVersion;
    std::uint64_t tokenLength;
    Cid occid, oscid, scid, retryScid, initialDcid;
    Cid dirScid, dirDcid, dirScid2, dirDcid2;  ///< ids seen before the direction was known
    Cid keysDcid;                              ///< the DCID `keys` were derived from
    std::uint32_t keysVersion;                 ///< … and the version
    bool keysAlt;                              ///< … with the version's second salt
    std::uint16_t dirDport, dirDport2, serverPort;
    std::uint8_t retryCount, multiplexed, zeroRtt, lastPacketType, chParsed;
    bool occidSet, oscidSet, scidSet, clientVersionSet, clientHelloSeen, packetFromServerSeen;
    bool extSet, keysValid, assemblyDone;
    std::uint8_t extCount;
    std::uint8_t ja4Len;
    std::uint16_t tlsExtLen;
    std::array<std::uint8_t, kMaxPacketTypes> packetTypes;
    std::array<std::uint16_t, kMaxExtensions> extTypes;
    std::array<std::uint16_t, kMaxExtensions> extLengths;
    std::array<char, tls::kJa4Len> ja4;
    char sni[255];
    char userAgent[255];
    char alpn[255];  ///< the client's ALPN list, ',' separated
    std::array<std::uint8_t, kTlsExtBytes> tlsExt;
    InitialKeys keys;
    CryptoAssembly<kCryptoCap> assembly;
};

/// What the plugin knows of the packet and its flow (FlowView/ParsedPacket, plugin-free).
struct QuicPacket {
    std::span<const std::uint8_t> payload;
    std::uint16_t srcPort = 0;  ///< of this packet
    std::uint16_t dstPort = 0;
    std::uint16_t flowSrcPort = 0;               ///< the flow's initiator port
    std::array<std::uint32_t, 2> flowPackets{};  ///< initiator→responder, reverse (counted)
};

enum class QuicUpdate : std::uint8_t { NotQuic, Quic, Flush };

/// Whether a datagram may start a QUIC record (the plugin's check before it takes one): a long
/// header of a known version, or a legacy gQUIC packet with its version. A bit test and a
/// version lookup for other UDP traffic.
bool mayStartFlow(std::span<const std::uint8_t> payload) noexcept;

/// Initialises a freshly attached record (need not be zeroed: the bulk buffers are not touched).
void initRecord(QuicRecord& rec) noexcept;

/// Applies one datagram. `fresh`: the record was attached for this packet (ipfixprobe's
/// new_quic_flow); the caller keeps it only when the result is not NotQuic.
QuicUpdate applyQuicPacket(const QuicPacket& pkt, QuicRecord& rec, bool fresh) noexcept;

}  // namespace rowprobe::quic
