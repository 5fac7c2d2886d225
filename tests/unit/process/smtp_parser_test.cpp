// SMTP commands and replies: bitmaps, counts, HELO domain, first sender/recipient, the DATA
// phase, SPAM, unknown verbs and codes; truncated and hostile input.
#include "process/smtp/smtp_parser.hpp"

#include <gtest/gtest.h>

#include "l7_test_bytes.hpp"

namespace {

using namespace rowprobe::smtp;
using rowprobe::test::bytesOf;
using rowprobe::test::vecOf;

}  // namespace

TEST(SmtpParser, ASessionFromBothSides) {
    SmtpRecord r;
    EXPECT_TRUE(applySmtpReply(bytesOf("220 mx.example ESMTP\r\n"), r));
    EXPECT_TRUE(applySmtpCommand(bytesOf("EHLO client.example\r\n"), r));
    EXPECT_TRUE(applySmtpReply(bytesOf("250-mx.example\r\n250 SIZE 1000\r\n"), r));
    EXPECT_TRUE(applySmtpCommand(bytesOf("MAIL FROM: <a@client.example>\r\n"), r));
    EXPECT_TRUE(applySmtpCommand(bytesOf("RCPT TO:<b@mx.example>\r\n"), r));
    EXPECT_TRUE(applySmtpCommand(bytesOf("RCPT TO:<c@mx.example>\r\n"), r));
    EXPECT_TRUE(applySmtpCommand(bytesOf("DATA\r\n"), r));
    EXPECT_TRUE(applySmtpReply(bytesOf("354 go ahead\r\n"), r));
    EXPECT_FALSE(applySmtpCommand(bytesOf("Subject: hi\r\n\r\nbody\r\n"), r));  // content
    EXPECT_TRUE(applySmtpCommand(bytesOf(".\r\n"), r));
    EXPECT_TRUE(applySmtpCommand(bytesOf("QUIT\r\n"), r));
    EXPECT_TRUE(applySmtpReply(bytesOf("221 bye\r\n"), r));

    EXPECT_EQ(r.commandFlags, kCmdEhlo | kCmdMail | kCmdRcpt | kCmdData | kCmdQuit);
    EXPECT_EQ(r.mailCount, 1U);
    EXPECT_EQ(r.rcptCount, 2U);
    EXPECT_EQ(r.codeFlags,
              smtpCodeBit(220) | smtpCodeBit(250) | smtpCodeBit(354) | smtpCodeBit(221));
    EXPECT_EQ(r.codes[0], 3U);  // 220, 250 (one packet), 221
    EXPECT_EQ(r.codes[1], 1U);
    EXPECT_EQ(r.domainText(), "client.example");
    EXPECT_EQ(r.senderText(), " <a@client.example>");
    EXPECT_EQ(r.recipientText(), "<b@mx.example>");  // the first one only
}

TEST(SmtpParser, CodeBitsSpamAndUnknown) {
    EXPECT_EQ(smtpCodeBit(211), 1U);
    EXPECT_EQ(smtpCodeBit(555), 1U << 23);
    EXPECT_EQ(smtpCodeBit(299), 0U);
    SmtpRecord r;
    EXPECT_TRUE(applySmtpReply(bytesOf("554 rejected as spam\r\n"), r));
    EXPECT_EQ(r.codeFlags, smtpCodeBit(554) | kCodeSpam);
    EXPECT_EQ(r.codes[3], 1U);
    // ipfixprobe's matcher does not re-test the byte after a partial match: "SSPAM" misses.
    SmtpRecord s;
    EXPECT_TRUE(applySmtpReply(bytesOf("550 SSPAM\r\n"), s));
    EXPECT_EQ(s.codeFlags & kCodeSpam, 0U);
    // A code outside the table sets "unknown"; a first digit outside 2..5 is no reply, but
    // the bit stays (as in ipfixprobe).
    SmtpRecord u;
    EXPECT_FALSE(applySmtpReply(bytesOf("199 what\r\n"), u));
    EXPECT_EQ(u.codeFlags, kCodeUnknown);
    EXPECT_FALSE(applySmtpReply(bytesOf("2500 x\r\n"), u));
    EXPECT_FALSE(applySmtpReply(bytesOf("25 x\r\n"), u));
    EXPECT_FALSE(applySmtpReply(bytesOf("250"), u));
}

TEST(SmtpParser, VerbsAndUnknownCommands) {
    SmtpRecord r;
    EXPECT_TRUE(applySmtpCommand(bytesOf("RSET\r\n"), r));  // an upper-case verb: no bit
    EXPECT_EQ(r.commandFlags, 0U);
    EXPECT_TRUE(applySmtpCommand(bytesOf("dGVzdA==\r\n"), r));  // AUTH data: "unknown"
    EXPECT_EQ(r.commandFlags, kCmdUnknown);
    EXPECT_FALSE(applySmtpCommand(bytesOf("HELO no-cr\n"), r));  // no CR: not a line
    EXPECT_FALSE(applySmtpCommand(bytesOf("AVERYLONGVERBTHATISLONGERTHAN32BYTES x\r\n"), r));
    EXPECT_TRUE(applySmtpCommand(bytesOf("HELO a\r\n"), r));
    EXPECT_TRUE(applySmtpCommand(bytesOf("HELO b\r\n"), r));
    EXPECT_EQ(r.domainText(), "a");  // the first domain stays
    EXPECT_EQ(r.commandFlags, kCmdUnknown | kCmdHelo);
}

TEST(SmtpParser, TruncatedAndHostileInput) {
    using rowprobe::test::forEachMutation;
    using rowprobe::test::forEachPrefix;
    for (const auto text : {"MAIL FROM:<x@y>\r\n", "RCPT TO:\r\nx: <late>\r\n", "HELO h\r\n",
                            "250-ok SPAM\r\n", ".\r\n"}) {
        SmtpRecord r;
        forEachPrefix(vecOf(text), [&](std::span<const std::uint8_t> p) {
            (void)applySmtpCommand(p, r);
            (void)applySmtpReply(p, r);
        });
        forEachMutation(vecOf(text), 3000, [&](std::span<const std::uint8_t> p) {
            (void)applySmtpCommand(p, r);
            (void)applySmtpReply(p, r);
            EXPECT_LE(r.senderLen, kTextCap - 1);
            EXPECT_LE(r.domainLen, kTextCap - 1);
        });
    }
}
