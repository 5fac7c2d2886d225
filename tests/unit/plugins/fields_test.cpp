// The field schema: one description per exported field, read from the right place, with the
// IPFIX and UniRec identities ipfixprobe and NEMEA use.
#include "rowprobe/fields.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "test_support.hpp"

namespace rowprobe {
namespace {

TEST(Fields, EveryFieldIdHasOneSpecWithAUniqueName) {
    const auto fields = coreFields();
    ASSERT_EQ(fields.size(), kCoreFieldCount);
    std::set<std::string_view> names;
    std::set<std::string_view> unirecNames;
    for (std::size_t i = 0; i < fields.size(); ++i) {
        EXPECT_EQ(&fieldSpec(static_cast<FieldId>(i)), &fields[i]);
        EXPECT_TRUE(names.insert(fields[i].name).second) << fields[i].name;
        EXPECT_EQ(findField(fields[i].name), &fields[i]);
        EXPECT_FALSE(fields[i].description.empty()) << fields[i].name;
        if (!fields[i].unirec.name.empty()) {
            EXPECT_TRUE(unirecNames.insert(fields[i].unirec.name).second) << fields[i].unirec.name;
        }
    }
    EXPECT_EQ(findField("no_such_field"), nullptr);
}

TEST(Fields, ReadersTakeEachValueFromItsFlowRecordMember) {
    FlowRecord r;
    r.bytes = {1001, 1002};
    r.packets = {2001, 2002};
    r.timeFirst = 3001;
    r.timeLast = 3002;
    r.srcPort = 4001;
    r.dstPort = 4002;
    r.vlan = 4003;
    r.icmpTypeCode = {0x0800, 0x0000};
    r.tcpFlags = {0x1b, 0x12};
    r.ttl = {64, 55};
    r.proto = 6;
    r.ipVersion = 4;
    r.endReason = EndReason::LackOfResources;
    r.queue = 3;
    r.srcAddr[15] = 0xAA;
    r.dstAddr[15] = 0xBB;
    r.srcMac[5] = 0xCC;
    r.dstMac[5] = 0xDD;
    r.tunnel.type = 3;
    r.tunnel.id = 0x123456;
    r.tunnel.src[15] = 0xEE;
    r.tunnel.dst[15] = 0xEF;
    ExportConstants c;
    c.dirBitField = 7;
    c.linkBitField = 0x1122334455667788ULL;
    c.odid = 99;
    const std::map<std::string_view, std::uint64_t> numbers = {
        {"bytes", 1001},
        {"bytes_rev", 1002},
        {"packets", 2001},
        {"packets_rev", 2002},
        {"time_first", 3001},
        {"time_last", 3002},
        {"src_port", 4001},
        {"dst_port", 4002},
        {"vlan", 4003},
        {"icmp_type_code", 0x0800},
        {"icmp_type_code_rev", 0},
        {"tcp_flags", 0x1b},
        {"tcp_flags_rev", 0x12},
        {"ttl", 64},
        {"ttl_rev", 55},
        {"proto", 6},
        {"ip_version", 4},
        {"end_reason", 5},
        {"queue", 3},
        {"dir_bit_field", 7},
        {"link_bit_field", 0x1122334455667788ULL},
        {"odid", 99},
        {"tunnel_type", 3},
        {"tunnel_id", 0x123456}};
    for (const FieldSpec& f : coreFields()) {
        if (isNumeric(f.type)) {
            ASSERT_TRUE(numbers.count(f.name)) << "no expectation for " << f.name;
            EXPECT_EQ(readUnsigned(f, r, c), numbers.at(f.name)) << f.name;
            EXPECT_TRUE(readBytes(f, r, c).empty());
        }
    }
    EXPECT_EQ(readBytes(*findField("src_ip"), r, c).back(), 0xAA);
    EXPECT_EQ(readBytes(*findField("dst_ip"), r, c).back(), 0xBB);
    EXPECT_EQ(readBytes(*findField("src_mac"), r, c).size(), 6U);
    EXPECT_EQ(readBytes(*findField("src_mac"), r, c).back(), 0xCC);
    EXPECT_EQ(readBytes(*findField("dst_mac"), r, c).back(), 0xDD);
    EXPECT_EQ(readBytes(*findField("tunnel_src"), r, c).back(), 0xEE);
    EXPECT_EQ(readBytes(*findField("tunnel_dst"), r, c).back(), 0xEF);
}

TEST(Fields, ReverseFieldsAreRfc5103TwinsOfTheirForwardFields) {
    for (const FieldSpec& f : coreFields()) {
        if (f.direction != FieldDirection::Reverse) continue;
        EXPECT_EQ(f.ipfix.pen, kPenReverse) << f.name;
        const std::string forwardName(f.name.substr(0, f.name.size() - 4));
        ASSERT_EQ(f.name.substr(f.name.size() - 4), "_rev") << f.name;
        const FieldSpec* fwd = findField(forwardName);
        ASSERT_NE(fwd, nullptr) << f.name;
        EXPECT_EQ(fwd->direction, FieldDirection::Forward);
        EXPECT_EQ(fwd->ipfix.pen, kPenIana);
        EXPECT_EQ(f.ipfix.id, fwd->ipfix.id) << f.name;
        EXPECT_EQ(f.ipfix.length, fwd->ipfix.length) << f.name;
        EXPECT_EQ(f.type, fwd->type);
        if (!f.unirec.name.empty()) {
            EXPECT_EQ(std::string(f.unirec.name), std::string(fwd->unirec.name) + "_REV");
            EXPECT_EQ(f.unirec.type, fwd->unirec.type);
        }
    }
}

TEST(Fields, AddressFieldsSwitchElementsWithTheIpVersion) {
    const FieldSpec& src = fieldSpec(FieldId::SrcIp);
    EXPECT_EQ(src.ipfixFor(4), (IpfixElement{0, 8, 4}));
    EXPECT_EQ(src.ipfixFor(6), (IpfixElement{0, 27, 16}));
    const FieldSpec& bytes = fieldSpec(FieldId::Bytes);
    EXPECT_EQ(bytes.ipfixFor(6), bytes.ipfix);
}

TEST(Fields, BasicListsAreIpfixprobes) {
    EXPECT_EQ(ipfixBasicFields().size(), 18U);
    std::vector<std::string> unirec;
    for (FieldId id : unirecBasicFields()) unirec.emplace_back(fieldSpec(id).unirec.name);
    // ipfixprobe's name list
    const std::vector<std::string> expected = {
        "SRC_IP",        "DST_IP",        "SRC_PORT",  "DST_PORT",   "PROTOCOL",      "PACKETS",
        "BYTES",         "PACKETS_REV",   "BYTES_REV", "TIME_FIRST", "TIME_LAST",     "TCP_FLAGS",
        "TCP_FLAGS_REV", "DIR_BIT_FIELD", "SRC_MAC",   "DST_MAC",    "LINK_BIT_FIELD"};
    EXPECT_EQ(unirec, expected);
    // ... and the columns of ipfixprobe's own "basic" test outputs, when the data is present.
    const auto headers = rowprobe::test::testdataDir() / "ipfixprobe" / "HEADERS.tsv";
    std::ifstream in(headers);
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("basic\t", 0) != 0) continue;
        std::set<std::string> columns;
        std::istringstream cols(line.substr(6));
        std::string c;
        while (std::getline(cols, c, ',')) columns.insert(c);
        EXPECT_EQ(columns, std::set<std::string>(expected.begin(), expected.end()));
    }
    std::vector<std::string> odid;
    for (FieldId id : unirecBasicFields(true)) odid.emplace_back(fieldSpec(id).unirec.name);
    EXPECT_EQ(odid.back(), "ODID");
}

TEST(Fields, UnirecTypesAreNemeasStandardOnes) {
    const std::map<std::string_view, std::string_view> nemea = {
        {"SRC_IP", "ipaddr"},         {"DST_IP", "ipaddr"},
        {"SRC_PORT", "uint16"},       {"DST_PORT", "uint16"},
        {"PROTOCOL", "uint8"},        {"PACKETS", "uint32"},
        {"BYTES", "uint64"},          {"TIME_FIRST", "time"},
        {"TIME_LAST", "time"},        {"TCP_FLAGS", "uint8"},
        {"DIR_BIT_FIELD", "uint8"},   {"SRC_MAC", "macaddr"},
        {"LINK_BIT_FIELD", "uint64"}, {"ODID", "uint32"},
        {"VLAN_ID", "uint16"},        {"L4_ICMP_TYPE_CODE", "uint16"},
        {"IP_TTL", "uint8"}};
    for (const FieldSpec& f : coreFields()) {
        auto it = nemea.find(f.unirec.name);
        if (it != nemea.end()) {
            EXPECT_EQ(f.unirec.type, it->second) << f.unirec.name;
        }
    }
}

}  // namespace
}  // namespace rowprobe
