// SIP: message types (and the HTTP/SSDP look-alikes), request and response first lines,
// header extraction with compact forms, URI rules, Via joining and field limits; truncated and
// hostile input.
#include "process/sip/sip_parser.hpp"

#include <gtest/gtest.h>

#include <string>

#include "l7_test_bytes.hpp"

namespace {

using namespace rowprobe::sip;
using rowprobe::test::bytesOf;
using rowprobe::test::vecOf;

constexpr std::string_view kInvite =
    "INVITE sip:100@195.113.172.38 SIP/2.0\r\n"
    "Via: SIP/2.0/UDP 127.0.1.1:5060;branch=z9hG4bK-1;rport\r\n"
    "Max-Forwards: 70\r\n"
    "From: \"100\" <sip:100@1.1.1.1>;tag=3e8a\r\n"
    "To: \"100\" <sip:100@1.1.1.1>\r\n"
    "Call-ID: 515746069277127103589732\r\n"
    "CSeq: 1 INVITE\r\n"
    "User-Agent: friendly-scanner\r\n"
    "Content-Length: 0\r\n"
    "\r\n";

constexpr std::string_view kResponse =
    "SIP/2.0 401 Unauthorized\r\n"
    "v: SIP/2.0/UDP 10.0.0.1:5060;branch=a\r\n"
    "v: SIP/2.0/UDP 10.0.0.2:5060;branch=b\r\n"
    "f: <sips:alice@example.com>\r\n"
    "t: sip:bob@example.com;tag=x\r\n"
    "i: abc@host\r\n"
    "CSeq: 2 REGISTER\r\n"
    "\r\n";

SipRecord parse(std::string_view text) {
    SipRecord r;
    parseSipMessage(bytesOf(text), sipMessageType(bytesOf(text)), r);
    return r;
}

}  // namespace

TEST(SipParser, MessageTypes) {
    const auto type = [](std::string first) {
        first.resize(80, 'x');
        return sipMessageType(bytesOf(first));
    };
    EXPECT_EQ(type("INVITE sip:a SIP/2.0"), 1);
    EXPECT_EQ(type("ACK sip:a SIP/2.0"), 2);
    EXPECT_EQ(type("CANCEL sip:a"), 3);
    EXPECT_EQ(type("BYE sip:a"), 4);
    EXPECT_EQ(type("REGISTER sip:a"), 5);
    EXPECT_EQ(type("OPTIONS sip:a"), 6);
    EXPECT_EQ(type("OPTIONS * HTTP/1.1"), kTypeInvalid);  // HTTP
    EXPECT_EQ(type("PUBLISH sip:a"), 7);
    EXPECT_EQ(type("NOTIFY sip:a"), 8);
    EXPECT_EQ(type("NOTIFY * HTTP/1.1"), kTypeInvalid);  // SSDP
    EXPECT_EQ(type("INFO sip:a"), 9);
    EXPECT_EQ(type("SUBSCRIBE sip:a"), 10);
    EXPECT_EQ(type("SIP/2.0 200 OK"), kTypeStatus);
    EXPECT_EQ(type("GET / HTTP/1.1"), kTypeInvalid);
    EXPECT_EQ(type("invite sip:a"), kTypeInvalid);  // methods are case-sensitive
    EXPECT_EQ(sipMessageType(bytesOf("INVITE sip:100@1.1.1.1 SIP/2.0\r\n")),
              kTypeInvalid);  // < 64 B
}

TEST(SipParser, RequestFields) {
    const SipRecord r = parse(kInvite);
    EXPECT_EQ(r.msgType, 1);
    EXPECT_EQ(r.statusCode, 0);
    EXPECT_EQ(r.requestUri.view(), "sip:100@195.113.172.38");
    EXPECT_EQ(r.via.view(), "SIP/2.0/UDP 127.0.1.1:5060");
    EXPECT_EQ(r.callingParty.view(), "sip:100@1.1.1.1");
    EXPECT_EQ(r.calledParty.view(), "sip:100@1.1.1.1");
    EXPECT_EQ(r.callId.view(), "515746069277127103589732");
    EXPECT_EQ(r.cseq.view(), "1 INVITE");
    EXPECT_EQ(r.userAgent.view(), "friendly-scanner");
}

TEST(SipParser, ResponseWithCompactHeaders) {
    const SipRecord r = parse(kResponse);
    EXPECT_EQ(r.msgType, kTypeStatus);
    EXPECT_EQ(r.statusCode, 401);
    EXPECT_EQ(r.requestUri.len, 0);
    EXPECT_EQ(r.via.view(), "SIP/2.0/UDP 10.0.0.1:5060;SIP/2.0/UDP 10.0.0.2:5060");
    EXPECT_EQ(r.callingParty.view(), "sips:alice@example.com");
    EXPECT_EQ(r.calledParty.view(), "sip:bob@example.com");  // ends at ';'
    EXPECT_EQ(r.callId.view(), "abc@host");
    EXPECT_EQ(r.cseq.view(), "2 REGISTER");
}

TEST(SipParser, UriWithoutDelimiterEndsAtItsLastLetter) {
    // ipfixprobe's rule: no '>' or ';': the URI is cut back to its last letter.
    std::string msg = "SIP/2.0 200 OK\r\nTo: sip:100@1.1.1.1\r\n";
    msg.resize(80, ' ');
    msg += "\r\n\r\n";
    const SipRecord r = parse(msg);
    EXPECT_EQ(r.statusCode, 200);
    EXPECT_EQ(r.calledParty.view(), "sip");
}

TEST(SipParser, FieldsStopAt127Bytes) {
    std::string msg = "INVITE sip:a SIP/2.0\r\nCall-ID: " + std::string(300, 'c') + "\r\n";
    for (int i = 0; i < 20; ++i) msg += "Via: SIP/2.0/UDP host" + std::to_string(i) + ":5060\r\n";
    msg += "\r\n";
    const SipRecord r = parse(msg);
    EXPECT_EQ(r.callId.len, kFieldCap);
    EXPECT_LE(r.via.len, kFieldCap);
    EXPECT_EQ(r.via.view().substr(0, 26), "SIP/2.0/UDP host0:5060;SIP");
}

TEST(SipParser, TruncatedAndHostileInput) {
    using rowprobe::test::forEachMutation;
    using rowprobe::test::forEachPrefix;
    for (const auto text : {kInvite, kResponse}) {
        forEachPrefix(vecOf(text), [](std::span<const std::uint8_t> p) {
            SipRecord r;
            parseSipMessage(p, sipMessageType(p), r);
            parseSipMessage(p, 1, r);
            parseSipMessage(p, kTypeStatus, r);
        });
        forEachMutation(vecOf(text), 5000, [](std::span<const std::uint8_t> p) {
            SipRecord r;
            parseSipMessage(p, 1, r);
            parseSipMessage(p, kTypeStatus, r);
            EXPECT_LE(r.via.len, kFieldCap);
            EXPECT_LE(r.callingParty.len, kFieldCap);
        });
    }
}
