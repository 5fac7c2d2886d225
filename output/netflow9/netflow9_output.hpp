// The `netflow9` output plugin: NetFlow v9 export packets (RFC 3954, netflow9_encoder.hpp) to
// a collector over UDP, or into a capture file of those datagrams (README.md).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "output/common/ipfix_transport.hpp"
#include "output/netflow9/netflow9_encoder.hpp"
#include "rowprobe/options.hpp"
#include "rowprobe/plugin.hpp"

namespace rowprobe::output {

/// `file=`: NetFlow v9 has no file format, so the packets are written as the UDP datagrams a
/// capture on the collector's side would hold (pcap, LINKTYPE_RAW IPv4, 127.0.0.1:40000 ->
/// 127.0.0.1:`port`), readable by tshark, Wireshark and nfpcapd.
class Netflow9PcapFile final : public IpfixTransport {
public:
    /// Opens (truncates) `path` and writes the pcap header. Throws RuntimeError.
    Netflow9PcapFile(const std::string& path, std::uint16_t port);
    ~Netflow9PcapFile() override;
    bool sendMessage(std::span<const std::uint8_t> message, std::uint32_t dataRecords,
                     bool templates) override;
    void flush() override;
    void finish() override;
    OutputStats stats() const override;

private:
    std::FILE* m_file = nullptr;
    std::uint16_t m_port = 0;
    std::atomic<std::uint64_t> m_records{0};
    std::atomic<std::uint64_t> m_dropped{0};
    std::atomic<std::uint64_t> m_bytes{0};
};

class Netflow9Output final : public OutputPlugin {
public:
    explicit Netflow9Output(const Options& options);
    ~Netflow9Output() override;

    void write(std::span<const FlowRecord> records) override;
    void flush() override;
    void finish() override;
    OutputStats stats() const override;
    void requestStop() override { m_transport->requestStop(); }

    const Netflow9Encoder& encoder() const { return *m_encoder; }

private:
    std::unique_ptr<IpfixTransport> m_transport;
    std::unique_ptr<Netflow9Encoder> m_encoder;
    bool m_finished = false;
};

}  // namespace rowprobe::output
