#include "process/ndpi/ndpi_record.hpp"

#include <array>
#include <cstring>

namespace rowprobe::ndpi {

namespace {

constexpr FieldSpec str(std::string_view name, std::string_view description, std::size_t offset,
                        IpfixElement ipfix, std::string_view unirec) {
    return {.name = name,
            .description = description,
            .type = FieldType::String,
            .origin = FieldOrigin::Plugin,
            .offset = static_cast<std::uint16_t>(offset),
            .ipfix = ipfix,
            .unirec = {unirec, "string"}};
}

constexpr IpfixElement kNone{kPenIana, 0, 0};

constexpr FieldSpec kFields[] = {
    str("ndpi_app", "application as nDPI names it (ndpi_protocol2name: \"TLS.Google\")",
        offsetof(NdpiFields, app), {kPenIana, 96, kIpfixVarLen}, "NDPI_APP"),
    {.name = "ndpi_app_id",
     .description = "nDPI 4.2 id of the application protocol (L7_PROTO)",
     .type = FieldType::Unsigned16,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(NdpiFields, appId),
     .ipfix = {kPenNtop, 118, 2},
     .unirec = {"NDPI_APP_ID", "uint16"}},
    str("ndpi_l7_proto_name", "ndpi_app again, as ntop's L7_PROTO_NAME element",
        offsetof(NdpiFields, l7ProtoName), {kPenNtop, 119, kIpfixVarLen}, "NDPI_L7_PROTO_NAME"),
    {.name = "ndpi_master_id",
     .description = "nDPI 4.2 id of the master (carrier) protocol, 0 when none",
     .type = FieldType::Unsigned16,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(NdpiFields, masterId),
     .ipfix = kNone,
     .unirec = {"NDPI_MASTER_ID", "uint16"}},
    str("ndpi_category", "nDPI category (\"Web\", \"Media\", ...)", offsetof(NdpiFields, category),
        kNone, "NDPI_CATEGORY"),
    str("ndpi_confidence", "how nDPI decided (\"DPI\", \"Match by port\", ...)",
        offsetof(NdpiFields, confidence), kNone, "NDPI_CONFIDENCE"),
    str("ndpi_risks", "flow risks found by nDPI, their names comma-separated",
        offsetof(NdpiFields, risks), kNone, "NDPI_RISKS"),
    {.name = "ndpi_risk_mask",
     .description = "flow risks as nDPI 4.2's ndpi_risk bit mask",
     .type = FieldType::Unsigned64,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(NdpiFields, riskMask),
     .ipfix = kNone,
     .unirec = {"NDPI_RISK_MASK", "uint64"}},
    str("ndpi_host", "host name nDPI extracted (HTTP Host, TLS/QUIC SNI, DNS query, DHCP ...)",
        offsetof(NdpiFields, host), kNone, "NDPI_HOST"),
    str("ndpi_user_agent", "HTTP (or QUIC) User-Agent", offsetof(NdpiFields, userAgent), kNone,
        "NDPI_USER_AGENT"),
    str("ndpi_ssh_client", "SSH client banner", offsetof(NdpiFields, sshClient), kNone,
        "NDPI_SSH_CLIENT"),
    str("ndpi_ssh_server", "SSH server banner", offsetof(NdpiFields, sshServer), kNone,
        "NDPI_SSH_SERVER"),
    {.name = "ndpi_bittorrent_hash",
     .description = "BitTorrent info hash (20 bytes)",
     .type = FieldType::Binary,
     .origin = FieldOrigin::Plugin,
     .offset = offsetof(NdpiFields, bittorrentHash),
     .ipfix = kNone,
     .unirec = {"NDPI_BITTORRENT_HASH", "bytes"}},
    str("ndpi_dhcp_fingerprint", "DHCP fingerprint (option 55 list)",
        offsetof(NdpiFields, dhcpFingerprint), kNone, "NDPI_DHCP_FINGERPRINT"),
    str("ndpi_dhcp_class_ident", "DHCP vendor class identifier (option 60)",
        offsetof(NdpiFields, dhcpClassIdent), kNone, "NDPI_DHCP_CLASS_IDENT"),
};

template <std::size_t N>
std::string_view bounded(const char (&s)[N]) noexcept {
    return {s, strnlen(s, N)};
}
std::string_view bounded(const char* s, std::size_t max) noexcept {
    return s == nullptr ? std::string_view{} : std::string_view{s, strnlen(s, max)};
}

bool is(const ndpi_protocol& p, std::uint16_t id) noexcept {
    return p.app_protocol == id || p.master_protocol == id;
}

constexpr std::size_t kMaxHeapString = 1024;  // nDPI's heap strings (user agent) are shorter

}  // namespace

std::span<const FieldSpec> ndpiFields() noexcept { return kFields; }

namespace {

std::string_view serviceOf(std::uint16_t id) noexcept {
    switch (id) {
        case NDPI_PROTOCOL_HTTP:
            return "http";
        case NDPI_PROTOCOL_TLS:
        case NDPI_PROTOCOL_MAIL_SMTPS:
        case NDPI_PROTOCOL_MAIL_IMAPS:
        case NDPI_PROTOCOL_MAIL_POPS:
            return "ssl";
        case NDPI_PROTOCOL_DTLS:
            return "dtls";
        case NDPI_PROTOCOL_DNS:
        case NDPI_PROTOCOL_MDNS:
        case NDPI_PROTOCOL_LLMNR:
            return "dns";
        case NDPI_PROTOCOL_QUIC:
            return "quic";
        case NDPI_PROTOCOL_SSH:
            return "ssh";
        case NDPI_PROTOCOL_FTP_CONTROL:
            return "ftp";
        case NDPI_PROTOCOL_FTP_DATA:
            return "ftp-data";
        case NDPI_PROTOCOL_MAIL_SMTP:
            return "smtp";
        case NDPI_PROTOCOL_MAIL_POP:
            return "pop3";
        case NDPI_PROTOCOL_MAIL_IMAP:
            return "imap";
        case NDPI_PROTOCOL_IRC:
            return "irc";
        case NDPI_PROTOCOL_SIP:
            return "sip";
        case NDPI_PROTOCOL_DHCP:
            return "dhcp";
        case NDPI_PROTOCOL_NTP:
            return "ntp";
        case NDPI_PROTOCOL_SNMP:
            return "snmp";
        case NDPI_PROTOCOL_MYSQL:
            return "mysql";
        case NDPI_PROTOCOL_KERBEROS:
            return "krb";
        case NDPI_PROTOCOL_RDP:
            return "rdp";
        case NDPI_PROTOCOL_SMBV1:
        case NDPI_PROTOCOL_SMBV23:
            return "smb";
        case NDPI_PROTOCOL_RADIUS:
            return "radius";
        case NDPI_PROTOCOL_SYSLOG:
            return "syslog";
        case NDPI_PROTOCOL_SOCKS:
            return "socks";
        case NDPI_PROTOCOL_MODBUS:
            return "modbus";
        case NDPI_PROTOCOL_DNP3:
            return "dnp3";
        case NDPI_PROTOCOL_MQTT:
            return "mqtt";
        case NDPI_PROTOCOL_VNC:
            return "rfb";
        case NDPI_PROTOCOL_LDAP:
            return "ldap";
        case NDPI_PROTOCOL_RTSP:
            return "rtsp";
        case NDPI_PROTOCOL_SSDP:
            return "ssdp";
        case NDPI_PROTOCOL_NETBIOS:
            return "netbios-ns";
        case NDPI_PROTOCOL_OPENVPN:
            return "openvpn";
        case NDPI_PROTOCOL_WIREGUARD:
            return "wireguard";
        case NDPI_PROTOCOL_TEREDO:
            return "teredo";
        case NDPI_PROTOCOL_GTP:
            return "gtpv1";
        case NDPI_PROTOCOL_POSTGRES:
            return "postgresql";
        case NDPI_PROTOCOL_REDIS:
            return "redis";
        default:
            return {};
    }
}

}  // namespace

std::string_view zeekService(const ndpi_protocol& p, ndpi_confidence_t confidence) noexcept {
    if (confidence != NDPI_CONFIDENCE_DPI && confidence != NDPI_CONFIDENCE_DPI_CACHE) return {};
    const std::string_view master = serviceOf(p.master_protocol);
    return !master.empty() ? master : serviceOf(p.app_protocol);
}

std::uint16_t operatorElementId(std::size_t field) noexcept {
    if (field >= std::size(kFields) || kFields[field].ipfix.id != 0) return 0;
    return static_cast<std::uint16_t>(field + 1);
}

std::size_t riskNames(std::uint64_t mask, std::span<char> buf) noexcept {
    std::size_t n = 0;
    for (unsigned i = 1; i < NDPI_MAX_RISK && i < 64; ++i) {
        if ((mask & (std::uint64_t{1} << i)) == 0) continue;
        const char* name = ndpi_risk2str(static_cast<ndpi_risk_enum>(i));
        if (name == nullptr) continue;
        const std::string_view s(name, strnlen(name, 256));
        const std::size_t need = s.size() + (n != 0 ? 1 : 0);
        if (n + need > buf.size()) break;  // a name that does not fit is left out whole
        if (n != 0) buf[n++] = ',';
        std::memcpy(buf.data() + n, s.data(), s.size());
        n += s.size();
    }
    return n;
}

void writeInstance(DetectionModule& module, FlowSlot& slot, InstanceWriter& out) noexcept {
    NdpiFields* f = out.begin<NdpiFields>();
    if (f == nullptr) return;
    const ndpi_protocol& p = slot.proto;
    const ndpi_flow_struct& flow = slot.flow;
    f->appId = p.app_protocol;
    f->masterId = p.master_protocol;
    f->riskMask = flow.risk;
    std::array<char, 128> name{};
    const std::string_view app{name.data(), module.protocolName(p, name)};
    f->app = out.appendString(app);
    f->l7ProtoName = out.appendString(app);
    f->category = out.appendString(module.categoryName(p.category));
    const char* confidence = ndpi_confidence_get_name(flow.confidence);
    f->confidence = out.appendString(bounded(confidence, 64));
    std::array<char, 2048> risks{};
    f->risks = out.appendString({risks.data(), riskNames(flow.risk, risks)});
    f->host = out.appendString(bounded(flow.host_server_name));
    f->userAgent = out.appendString(bounded(flow.http.user_agent, kMaxHeapString));
    if (is(p, NDPI_PROTOCOL_SSH)) {
        f->sshClient = out.appendString(bounded(flow.protos.ssh.client_signature));
        f->sshServer = out.appendString(bounded(flow.protos.ssh.server_signature));
    }
    // 4.2 keeps no hash in TLS-carried BitTorrent flows and another protocol's bytes there.
    if (p.app_protocol == NDPI_PROTOCOL_BITTORRENT && p.master_protocol == NDPI_PROTOCOL_UNKNOWN) {
        const auto& h = flow.protos.bittorrent.hash;
        bool any = false;
        for (const unsigned char b : h) any = any || b != 0;
        if (any) f->bittorrentHash = out.appendBytes(h, sizeof h);
    }
    if (is(p, NDPI_PROTOCOL_DHCP)) {
        f->dhcpFingerprint = out.appendString(bounded(flow.protos.dhcp.fingerprint));
        f->dhcpClassIdent = out.appendString(bounded(flow.protos.dhcp.class_ident));
    }
    out.commit();
}

}  // namespace rowprobe::ndpi
