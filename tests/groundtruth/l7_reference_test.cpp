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
    expectPluginReference(
        {.plugin = "tls", .pcap = "tls.pcap", .records = 28, .processArg = "tls;ja4=ipfixprobe"});
}

TEST(PluginReference, IdpContentOfIdpcontentPcap) {
    expectPluginReference({.plugin = "idpcontent", .pcap = "idpcontent.pcap", .records = 1});
}

}  // namespace
}  // namespace rowprobe::test
