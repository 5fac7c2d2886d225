// bench_l7: what the http, tls, dns and quic plugins' packet work costs, on a real capture.
//
//   bench_l7 FILE.pcap [--rounds N]
//
// Loads the capture, parses every packet once (rowprobe's packet parser), groups packets by
// biflow, then times — per plugin, in rounds, on one thread — exactly the per-packet work its
// hooks do: http classifies every payload and parses requests/responses into the flow's record;
// tls tries every packet of a flow until its ClientHello (then JA3 + JA4) and ServerHello (JA3S);
// dns parses every port-53 payload into a record; quic checks every UDP payload of a flow
// without a record (long header of a known version, gQUIC public header) and applies every
// datagram of a flow with one (decryption, reassembly, ClientHello/CHLO parse, packet types).
// The flow table, pools and outputs are not in
// the loop. Prints the median over the rounds of ns per packet of the whole capture, and how
// many packets each plugin actually parsed.
#include <pcap/pcap.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "process/dns/dns_record.hpp"
#include "process/http/http_parser.hpp"
#include "process/http/http_record.hpp"
#include "process/quic/quic_record.hpp"
#include "process/tls/tls_record.hpp"
#include "rowprobe/packet.hpp"

namespace {

using namespace rowprobe;

struct Pkt {
    std::uint32_t flow;
    bool tcp;
    bool udp;
    bool port53;
    std::uint16_t sport;
    std::uint16_t dport;
    std::vector<std::uint8_t> payload;
};

std::vector<Pkt> load(const char* file, std::size_t& flowCount) {
    char err[PCAP_ERRBUF_SIZE];
    pcap_t* p = pcap_open_offline(file, err);
    if (p == nullptr) {
        std::fprintf(stderr, "bench_l7: %s\n", err);
        std::exit(2);
    }
    const auto link = static_cast<LinkType>(pcap_datalink(p));
    std::unordered_map<std::string, std::uint32_t> ids;
    std::vector<Pkt> out;
    pcap_pkthdr* h;
    const u_char* d;
    AnomalyCounters anomalies;
    while (pcap_next_ex(p, &h, &d) == 1) {
        ParsedPacket pp;
        if (!parsePacket({d, h->caplen, h->len, 0}, link, ParserConfig{}, pp, anomalies)) continue;
        const auto b = pp.key.bytes();
        const std::string key(reinterpret_cast<const char*>(b.data()), b.size());
        const auto id = ids.try_emplace(key, static_cast<std::uint32_t>(ids.size())).first->second;
        const auto pl = pp.payload();
        out.push_back({id,
                       pp.key.proto == 6,
                       pp.key.proto == 17,
                       pp.key.portA == 53 || pp.key.portB == 53,
                       pp.srcPort(),
                       pp.dstPort(),
                       {pl.begin(), pl.end()}});
    }
    pcap_close(p);
    flowCount = ids.size();
    return out;
}

// The thread's CPU time, not wall time: on a machine shared with other jobs the thread's
// waits for a core would count otherwise.
double threadCpuNs() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_nsec);
}

template <class F>
double nsPerPacket(const std::vector<Pkt>& pkts, int rounds, F&& runOnce) {
    std::vector<double> samples;
    for (int r = 0; r < rounds; ++r) {
        const double t0 = threadCpuNs();
        runOnce();
        const double t1 = threadCpuNs();
        samples.push_back((t1 - t0) / static_cast<double>(pkts.size()));
    }
    std::sort(samples.begin(), samples.end());
    return samples[samples.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: bench_l7 FILE.pcap [--rounds N]\n");
        return 2;
    }
    int rounds = 21;
    if (argc >= 4 && std::strcmp(argv[2], "--rounds") == 0)
        rounds = std::max(1, std::atoi(argv[3]));
    std::size_t flows = 0;
    const std::vector<Pkt> pkts = load(argv[1], flows);
    if (pkts.empty()) {
        std::fprintf(stderr, "bench_l7: no packets\n");
        return 2;
    }

    // http: classify every payload; parse into the flow's record (or a scratch one).
    std::size_t httpParsed = 0;
    std::vector<http::HttpRecord> httpRecs(flows);
    std::vector<std::uint8_t> httpHas(flows);
    const double httpNs = nsPerPacket(pkts, rounds, [&] {
        std::fill(httpHas.begin(), httpHas.end(), 0);
        httpParsed = 0;
        for (const Pkt& p : pkts) {
            if (http::classifyHttp(p.payload) == http::HttpKind::None) continue;
            ++httpParsed;
            http::HttpRecord& rec = httpRecs[p.flow];
            if (!httpHas[p.flow]) rec = http::HttpRecord{};
            const auto r = http::applyHttpPacket(p.payload, rec);
            if (r == http::HttpUpdate::Stored || r == http::HttpUpdate::Partial)
                httpHas[p.flow] = 1;
            if (r == http::HttpUpdate::FlushReinsert) httpHas[p.flow] = 0;
        }
    });

    // tls: every packet until the ClientHello, then until the ServerHello, then nothing.
    std::size_t tlsTried = 0;
    std::vector<tls::TlsRecord> tlsRecs(flows);
    std::vector<std::uint8_t> tlsState(flows);  // 0 none, 1 client hello, 2 done
    const tls::TlsOptions options{};
    const double tlsNs = nsPerPacket(pkts, rounds, [&] {
        std::fill(tlsState.begin(), tlsState.end(), 0);
        tlsTried = 0;
        for (const Pkt& p : pkts) {
            std::uint8_t& st = tlsState[p.flow];
            if (st == 2) continue;
            ++tlsTried;
            tls::TlsRecord& rec = tlsRecs[p.flow];
            if (st == 0) {
                if (p.payload.size() <= 5 || p.payload[0] != 22 || p.payload[5] != 1) continue;
                rec = tls::TlsRecord{};
                if (applyTlsPacket(p.payload, rec, false, options) == tls::TlsUpdate::Stored)
                    st = 1;
            } else if (applyTlsPacket(p.payload, rec, true, options) == tls::TlsUpdate::Done) {
                st = 2;
            }
        }
    });

    // dns: every port-53 payload.
    std::size_t dnsParsed = 0;
    dns::DnsRecord dnsRec;
    const double dnsNs = nsPerPacket(pkts, rounds, [&] {
        dnsParsed = 0;
        for (const Pkt& p : pkts) {
            if (!p.port53) continue;
            dnsRec = dns::DnsRecord{};
            dnsParsed += applyDnsPayload(p.payload, p.tcp, dnsRec) ? 1 : 0;
        }
    });

    // quic: a record per flow from its first QUIC datagram (records taken in the first round
    // and reused, as the plugin's pool does), every datagram of such a flow applied.
    std::size_t quicApplied = 0;
    std::size_t quicHellos = 0;
    std::vector<std::uint16_t> flowSrcPort(flows);
    std::vector<std::uint8_t> seen(flows);
    for (const Pkt& p : pkts) {
        if (!seen[p.flow]) flowSrcPort[p.flow] = p.sport;
        seen[p.flow] = 1;
    }
    std::vector<std::array<std::uint32_t, 2>> counts(flows);
    std::vector<std::int32_t> slot(flows, -1);
    std::vector<std::uint8_t> attached(flows);
    std::vector<std::unique_ptr<quic::QuicRecord>> quicPool;
    const double quicNs = nsPerPacket(pkts, rounds, [&] {
        std::fill(attached.begin(), attached.end(), 0);
        std::fill(counts.begin(), counts.end(), std::array<std::uint32_t, 2>{});
        quicApplied = 0;
        for (const Pkt& p : pkts) {
            if (!p.udp) continue;
            auto& c = counts[p.flow];
            ++c[p.sport == flowSrcPort[p.flow] ? 0 : 1];
            const quic::QuicPacket qp{.payload = p.payload,
                                      .srcPort = p.sport,
                                      .dstPort = p.dport,
                                      .flowSrcPort = flowSrcPort[p.flow],
                                      .flowPackets = c};
            const bool fresh = !attached[p.flow];
            if (fresh && !quic::mayStartFlow(p.payload)) continue;
            if (slot[p.flow] < 0) {
                slot[p.flow] = static_cast<std::int32_t>(quicPool.size());
                quicPool.push_back(std::make_unique<quic::QuicRecord>());
            }
            quic::QuicRecord& rec = *quicPool[static_cast<std::size_t>(slot[p.flow])];
            if (fresh) quic::initRecord(rec);
            ++quicApplied;
            const auto r = quic::applyQuicPacket(qp, rec, fresh);
            // a datagram that is not QUIC keeps a flow's record (short headers); a fresh one
            // that is not QUIC takes none; Version Negotiation flushes it
            if (r == quic::QuicUpdate::Flush) {
                attached[p.flow] = 0;
            } else if (fresh) {
                attached[p.flow] = r == quic::QuicUpdate::Quic ? 1 : 0;
            }
        }
    });
    for (std::size_t f = 0; f < flows; ++f)
        if (slot[f] >= 0 && quicPool[static_cast<std::size_t>(slot[f])]->chParsed) ++quicHellos;

    std::printf("%s: %zu packets, %zu flows, %d rounds (median)\n", argv[1], pkts.size(), flows,
                rounds);
    std::printf("  http  %7.1f ns/packet  (%zu HTTP-looking payloads parsed)\n", httpNs,
                httpParsed);
    std::printf("  tls   %7.1f ns/packet  (%zu packets tried before flows were done)\n", tlsNs,
                tlsTried);
    std::printf("  dns   %7.1f ns/packet  (%zu messages parsed)\n", dnsNs, dnsParsed);
    std::printf("  quic  %7.1f ns/packet  (%zu datagrams applied, %zu flows with a hello)\n",
                quicNs, quicApplied, quicHellos);
    return 0;
}
