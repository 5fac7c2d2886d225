// The vlan, icmp, flowhash, mpls and ntp plugins through the SDK as the flow table drives them
// (flow_driver.hpp), on generated frames: what ipfixprobe 5.7's plugins of the same names put in
// their extensions (vlan_id of the first packet; ICMP type/code of the first packet when it has
// two bytes; a flow id; the top MPLS label stack section; one NTP record per packet), and the
// pure readers behind them on truncated and hostile input.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "flow_driver.hpp"
#include "process/mpls/mpls_label.hpp"
#include "process/ntp/ntp_parser.hpp"
#include "rowprobe/errors.hpp"

namespace rowprobe::test {
namespace {

// Inserts `tags` (TPID, TCI pairs) after the MACs of an Ethernet frame.
Bytes tagged(Bytes f, std::initializer_list<std::array<std::uint16_t, 2>> tags) {
    Bytes ins;
    for (const auto& [tpid, tci] : tags) {
        ins.push_back(static_cast<std::uint8_t>(tpid >> 8));
        ins.push_back(static_cast<std::uint8_t>(tpid));
        ins.push_back(static_cast<std::uint8_t>(tci >> 8));
        ins.push_back(static_cast<std::uint8_t>(tci));
    }
    f.insert(f.begin() + 12, ins.begin(), ins.end());
    return f;
}

// Replaces the EtherType of an Ethernet/IPv4 frame by MPLS unicast and a label stack.
Bytes withLabels(Bytes f, const std::vector<std::uint32_t>& entries) {
    f[12] = 0x88;
    f[13] = 0x47;
    Bytes stack;
    for (const std::uint32_t e : entries)
        for (int s = 24; s >= 0; s -= 8) stack.push_back(static_cast<std::uint8_t>(e >> s));
    f.insert(f.begin() + 14, stack.begin(), stack.end());
    return f;
}

std::uint32_t labelEntry(std::uint32_t label, unsigned tc, bool bottom, unsigned ttl) {
    return label << 12 | tc << 9 | (bottom ? 1U : 0U) << 8 | ttl;
}

// Ethernet + IPv4 + ICMP echo (type 8 code 0 unless given).
Bytes icmpFrame(std::uint8_t type, std::uint8_t code, std::size_t icmpBytes) {
    Bytes body = {type, code, 0, 0, 0, 1, 0, 1};
    body.resize(icmpBytes, 0x61);
    Bytes f = frame(17, kClient, 0, kServer, 0, {});
    f.resize(14 + 20);  // drop the UDP header: the ICMP bytes follow the IP header
    f[14 + 9] = 1;
    const std::size_t ipLen = 20 + body.size();
    f[14 + 2] = static_cast<std::uint8_t>(ipLen >> 8);
    f[14 + 3] = static_cast<std::uint8_t>(ipLen);
    f.insert(f.end(), body.begin(), body.end());
    return f;
}

Bytes ntpPayload(std::uint8_t first, std::uint8_t stratum, std::uint8_t poll) {
    Bytes p(48, 0);
    p[0] = first;
    p[1] = stratum;
    p[2] = poll;
    p[3] = 0xEC;
    // root delay 0x00000123, dispersion 0x00000456, ref id 195.113.144.238
    p[7] = 0x23;
    p[6] = 0x01;
    p[10] = 0x04;
    p[11] = 0x56;
    p[12] = 195;
    p[13] = 113;
    p[14] = 144;
    p[15] = 238;
    // transmit: seconds 0xDAB52BE8 (3669306344), fraction 0x05000000 (0.019531 s)
    const std::array<std::uint8_t, 8> tx{0xDA, 0xB5, 0x2B, 0xE8, 0x05, 0x00, 0x00, 0x00};
    std::copy(tx.begin(), tx.end(), p.begin() + 40);
    return p;
}

TEST(VlanPlugin, OuterVlanOfTheFirstPacketAndZeroWhenUntagged) {
    FlowDriver d("vlan");
    d.packet(tagged(frame(17, kClient, 1000, kServer, 53, bytesOf("q")),
                    {{0x88A8, 0x2064}, {0x8100, 7}}));
    auto w = d.write();
    ASSERT_EQ(w.size(), 1U);
    EXPECT_EQ(w[0]["vlan_id"], "100");  // outer S-tag, 12 bits of the TCI (priority 1 dropped)

    FlowDriver u("vlan");
    EXPECT_EQ(u.packet(frame(17, kClient, 1000, kServer, 53, bytesOf("q"))) & kDone, kDone);
    w = u.write();
    ASSERT_EQ(w.size(), 1U);  // every flow carries the extension, as in ipfixprobe
    EXPECT_EQ(w[0]["vlan_id"], "0");
}

TEST(IcmpPlugin, TypeCodeOfTheFirstPacketOnlyForIcmpWithTwoBytes) {
    FlowDriver d("icmp");
    d.packet(icmpFrame(3, 13, 36));
    auto w = d.write();
    ASSERT_EQ(w.size(), 1U);
    EXPECT_EQ(w[0]["l4_icmp_type_code"], std::to_string(3 << 8 | 13));

    FlowDriver shortOne("icmp");  // one ICMP byte captured: no extension (ipfixprobe's check)
    shortOne.packet(icmpFrame(8, 0, 1));
    EXPECT_TRUE(shortOne.write().empty());

    FlowDriver udp("icmp");
    EXPECT_EQ(udp.packet(frame(17, kClient, 1000, kServer, 53, bytesOf("xx"))) & kDone, kDone);
    EXPECT_TRUE(udp.write().empty());
}

TEST(FlowHashPlugin, SameIdForBothDirectionsDifferentForAnotherFlow) {
    FlowDriver a("flowhash");
    a.packet(frame(6, kClient, 40000, kServer, 80, {}));
    FlowDriver b("flowhash");
    b.packet(frame(6, kServer, 80, kClient, 40000, {}));  // the same conversation, reversed
    FlowDriver c("flowhash");
    c.packet(frame(6, kClient, 40001, kServer, 80, {}));
    const auto wa = a.write();
    ASSERT_EQ(wa.size(), 1U);
    EXPECT_EQ(wa[0].at("flow_id"), b.write().at(0).at("flow_id"));
    EXPECT_NE(wa[0].at("flow_id"), c.write().at(0).at("flow_id"));
    EXPECT_NE(wa[0].at("flow_id"), "0");
}

TEST(MplsPlugin, TopEntryOfTheStackWithoutTtl) {
    FlowDriver d("mpls");
    d.packet(withLabels(frame(17, kClient, 1000, kServer, 53, bytesOf("q")),
                        {labelEntry(0xABCDE, 5, false, 64), labelEntry(17, 0, true, 63)}));
    auto w = d.write();
    ASSERT_EQ(w.size(), 1U);
    EXPECT_EQ(w[0]["mpls_top_label_stack_section"], "abcdea");  // label, TC 5, S 0

    FlowDriver vlanThenMpls("mpls");
    vlanThenMpls.packet(
        tagged(withLabels(frame(6, kClient, 1, kServer, 2, {}), {labelEntry(16, 0, true, 1)}),
               {{0x8100, 42}}));
    w = vlanThenMpls.write();
    ASSERT_EQ(w.size(), 1U);
    EXPECT_EQ(w[0]["mpls_top_label_stack_section"], "000101");

    FlowDriver plain("mpls");
    plain.packet(frame(17, kClient, 1000, kServer, 53, bytesOf("q")));
    EXPECT_TRUE(plain.write().empty());
}

TEST(MplsLabel, HostileAndTruncatedHeadersGiveNoLabel) {
    const Bytes f = withLabels(frame(17, kClient, 1, kServer, 2, {}),
                               {labelEntry(100, 0, false, 9), labelEntry(200, 0, true, 9)});
    const std::span<const std::uint8_t> all(f);
    EXPECT_EQ(mpls::topLabelEntry(all.first(22)), labelEntry(100, 0, false, 9));
    // every shorter view: the stack does not end where IP starts
    for (std::size_t n = 0; n < 22; ++n) EXPECT_EQ(mpls::topLabelEntry(all.first(n)), 0U) << n;
    // a stack that never ends (no S bit) inside the bytes before IP
    Bytes noBottom = withLabels(frame(17, kClient, 1, kServer, 2, {}),
                                std::vector<std::uint32_t>(20, labelEntry(5, 0, false, 1)));
    EXPECT_EQ(mpls::topLabelEntry(std::span<const std::uint8_t>(noBottom).first(14 + 80)), 0U);
    // random bytes before an IP header: never a read past the span (ASan), usually 0
    std::uint32_t seed = 12345;
    for (int i = 0; i < 2000; ++i) {
        Bytes junk(static_cast<std::size_t>(seed % 64));
        for (auto& b : junk)
            b = static_cast<std::uint8_t>((seed = seed * 1103515245 + 12345) >> 16);
        (void)mpls::topLabelEntry(junk);
        seed = seed * 1103515245 + 12345;
    }
}

TEST(NtpPlugin, EveryPacketOnPort123IsFlushedWithItsHeader) {
    FlowDriver d("ntp");
    const HookResult r = d.packet(frame(17, kClient, 123, kServer, 123, ntpPayload(0x24, 2, 6)));
    EXPECT_EQ(r & kFlush, kFlush);
    auto w = d.write();
    ASSERT_EQ(w.size(), 1U);
    EXPECT_EQ(w[0]["ntp_leap"], "0");
    EXPECT_EQ(w[0]["ntp_version"], "4");
    EXPECT_EQ(w[0]["ntp_mode"], "4");
    EXPECT_EQ(w[0]["ntp_stratum"], "2");
    EXPECT_EQ(w[0]["ntp_poll"], "6");
    EXPECT_EQ(w[0]["ntp_precision"], "236");
    EXPECT_EQ(w[0]["ntp_delay"], std::to_string(0x123));
    EXPECT_EQ(w[0]["ntp_dispersion"], std::to_string(0x456));
    EXPECT_EQ(w[0]["ntp_ref_id"], "195.113.144.238");
    EXPECT_EQ(w[0]["ntp_sent"], "3669306344.019531");
    EXPECT_EQ(w[0]["ntp_orig"], "0.000000");

    FlowDriver compat("ntp;format=ipfixprobe");
    compat.packet(frame(17, kClient, 123, kServer, 123, ntpPayload(0x24, 2, 6)));
    w = compat.write();
    ASSERT_EQ(w.size(), 1U);
    EXPECT_EQ(w[0]["ntp_delay"], "9");
    // ipfixprobe reads 05 00 00 00 as "5" "0" "0" "0" = 0x5000: 0x5000 / 2^32 = 0.000005 s
    EXPECT_EQ(w[0]["ntp_sent"], "3669306344.000005");
}

TEST(NtpPlugin, BadHeadersFlushWithoutFieldsAndOtherPortsAreDone) {
    for (const Bytes& p :
         {ntpPayload(0x1C, 2, 6) /* version 3 */, ntpPayload(0x25, 2, 6) /* mode 5 */,
          ntpPayload(0x24, 17, 6), ntpPayload(0x24, 2, 18), Bytes(47, 0x24), Bytes{}}) {
        FlowDriver d("ntp");
        EXPECT_EQ(d.packet(frame(17, kClient, 5000, kServer, 123, p)) & kFlush, kFlush);
        EXPECT_TRUE(d.write().empty());
    }
    FlowDriver other("ntp");
    EXPECT_EQ(other.packet(frame(17, kClient, 5000, kServer, 124, ntpPayload(0x24, 2, 6))), kDone);
    EXPECT_TRUE(other.write().empty());
}

TEST(NtpParser, TextForms) {
    std::array<char, ntp::kNtpTextSize> b{};
    EXPECT_EQ(std::string(b.data(), ntp::formatRefId(0x494E4954, 0, b)), "INIT");
    EXPECT_EQ(std::string(b.data(), ntp::formatRefId(0x494E4954, 1, b)), "73.78.73.84");
    EXPECT_EQ(std::string(b.data(), ntp::formatRefId(0x52415445, 0, b)), "RATE");
    EXPECT_EQ(std::string(b.data(), ntp::formatRefId(0, 0, b)), "0.0.0.0");
    EXPECT_EQ(std::string(b.data(), ntp::formatRefId(0xFFFFFFFF, 0, b)), "255.255.255.255");
    // the largest value, and a fraction rounding up to a whole second
    EXPECT_EQ(std::string(b.data(), ntp::formatNtpTimestamp(~0ULL, ntp::NtpTextMode::Rfc, b)),
              "4294967296.000000");
    EXPECT_EQ(
        std::string(b.data(), ntp::formatNtpTimestamp(~0ULL, ntp::NtpTextMode::Ipfixprobe, b)),
        "4294967295.000000");
    // 0.5 s exactly, and printf's tie to even at the sixth digit
    EXPECT_EQ(
        std::string(b.data(), ntp::formatNtpTimestamp(0x80000000ULL, ntp::NtpTextMode::Rfc, b)),
        "0.500000");
}

}  // namespace
}  // namespace rowprobe::test
