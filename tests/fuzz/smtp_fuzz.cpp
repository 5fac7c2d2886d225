// libFuzzer target for the SMTP reader (process/smtp): the input is split into packets at
// 0xFF bytes, alternately commands and replies, fed to one record.
//
//   ./smtp_fuzz -max_len=2048 corpus/smtp_fuzz
#include "fuzz_buffer.hpp"
#include "process/smtp/smtp_parser.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace rowprobe::smtp;
    SmtpRecord r;
    std::size_t start = 0;
    for (bool command = true; start <= size; command = !command) {
        std::size_t end = start;
        while (end < size && data[end] != 0xFF) ++end;
        const rowprobe::fuzz::ExactBuffer pkt(data + start, end - start);
        if (command) {
            (void)applySmtpCommand(pkt.span(), r);
        } else {
            (void)applySmtpReply(pkt.span(), r);
        }
        start = end + 1;
    }
    rowprobe::fuzz::check(r.domainLen < kTextCap && r.senderLen < kTextCap &&
                          r.recipientLen < kTextCap);
    rowprobe::fuzz::check((r.commandFlags & ~0x87FFU) == 0);
    return 0;
}
