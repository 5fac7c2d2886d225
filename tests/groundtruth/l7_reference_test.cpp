// Acceptance (issue 15): the http, dns, passivedns, tls and idpcontent plugins reproduce
// ipfixprobe 5.7's functional-test reference outputs end to end — pcap input, the flow table's
// hooks and flushes, the json output — record for record and field for field (the harness is
// plugin_reference.hpp). Deliberate differences are named per case with the reason.
#include "plugin_reference.hpp"

namespace rowprobe::test {
namespace {

TEST(PluginReference, HttpOfHttpPcap) {
    expectPluginReference({.plugin = "http", .pcap = "http.pcap", .records = 9});
}

TEST(PluginReference, DnsOfDnsPcap) {
    expectPluginReference({.plugin = "dns", .pcap = "dns.pcap", .records = 16});
}

TEST(PluginReference, PassiveDnsOfDnsPcap) {
    expectPluginReference({.plugin = "passivedns", .pcap = "dns.pcap", .records = 6});
}

TEST(PluginReference, TlsOfTlsPcap) {
    // ja4=ipfixprobe: ipfixprobe counts GREASE extensions in JA4 (process/tls/README.md).
    // Counters not compared: tls.pcap holds a 2015 capture twice with 2020 sessions between the
    // copies, so packet time steps back and forth. The cache's sweep runs after each 64-packet
    // batch on the batch's newest time; the batch of frames 65-128 ends in 2015 but holds 2020
    // packets, so the 2015 connection 172.16.121.155:3923 is expired there and its last 8
    // packets (frames 132-139) make a second flow (24 + 8 packets), where ipfixprobe's partial
    // per-packet sweep happened to keep all 32 in one. That is the flow core's behaviour, not
    // the plugin's (the core's counters are checked on mixed.pcap by IpfixprobeReference); the
    // record's key, times and every TLS field are still compared.
    expectPluginReference({.plugin = "tls",
                           .pcap = "tls.pcap",
                           .records = 28,
                           .processArg = "tls;ja4=ipfixprobe",
                           .ignore = {"PACKETS", "PACKETS_REV", "BYTES", "BYTES_REV"}});
}

TEST(PluginReference, IdpContentOfIdpcontentPcap) {
    expectPluginReference({.plugin = "idpcontent", .pcap = "idpcontent.pcap", .records = 1});
}

}  // namespace
}  // namespace rowprobe::test
