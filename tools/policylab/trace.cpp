#include "trace.hpp"

#include <pcap/pcap.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <stdexcept>

namespace rowprobe::lab {

std::size_t FlowKeyHash::operator()(const FlowKey& k) const noexcept {
    return static_cast<std::size_t>(XXH3_64bits(&k, sizeof k));
}

std::uint32_t Trace::find(const FlowKey& key) const {
    const auto it = idOfKey.find(key);
    return it == idOfKey.end() ? UINT32_MAX : it->second;
}

namespace {

struct PcapCloser {
    void operator()(pcap_t* p) const noexcept { pcap_close(p); }
};

}  // namespace

void assignKeyIds(Trace& trace) {
    trace.keyId.resize(trace.packets.size());
    trace.keys.clear();
    trace.idOfKey.clear();
    for (std::size_t i = 0; i < trace.packets.size(); ++i) {
        const FlowKey& k = trace.packets[i].key;
        const auto [it, inserted] =
            trace.idOfKey.try_emplace(k, static_cast<std::uint32_t>(trace.keys.size()));
        if (inserted) trace.keys.push_back(k);
        trace.keyId[i] = it->second;
    }
}

namespace {

/// A gzip-compressed capture decompressed into a temporary file, removed when this goes away.
class Gunzipped {
public:
    explicit Gunzipped(const std::string& gz) {
        m_path =
            std::filesystem::temp_directory_path() / ("rowprobe-lab-" + std::to_string(::getpid()) +
                                                      "-" + std::to_string(++counter()) + ".pcap");
        std::string quoted = "'";
        for (char c : gz) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
        quoted += "'";
        const std::string cmd = "gzip -dc -- " + quoted + " > '" + m_path.string() + "'";
        if (std::system(cmd.c_str()) != 0) {
            std::filesystem::remove(m_path);
            throw std::runtime_error("cannot decompress '" + gz + "' with gzip");
        }
    }
    ~Gunzipped() {
        std::error_code ec;
        std::filesystem::remove(m_path, ec);
    }
    Gunzipped(const Gunzipped&) = delete;
    Gunzipped& operator=(const Gunzipped&) = delete;
    std::string path() const { return m_path.string(); }

private:
    static unsigned& counter() {
        static unsigned n = 0;
        return n;
    }
    std::filesystem::path m_path;
};

}  // namespace

Trace loadCapture(const std::string& path, const ParserConfig& parser) {
    if (path.size() > 3 && path.ends_with(".gz")) {
        const Gunzipped plain(path);
        Trace t = loadCapture(plain.path(), parser);
        t.source = path;
        return t;
    }
    std::array<char, PCAP_ERRBUF_SIZE> err{};
    std::unique_ptr<pcap_t, PcapCloser> handle(pcap_open_offline_with_tstamp_precision(
        path.c_str(), PCAP_TSTAMP_PRECISION_NANO, err.data()));
    if (!handle) throw std::runtime_error("cannot read capture '" + path + "': " + err.data());
    const bool nano = pcap_get_tstamp_precision(handle.get()) == PCAP_TSTAMP_PRECISION_NANO;
    LinkType link = LinkType::Ethernet;
    if (!linkTypeFromPcap(pcap_datalink(handle.get()), link)) {
        throw std::runtime_error("capture '" + path + "': unsupported link type " +
                                 std::to_string(pcap_datalink(handle.get())));
    }
    Trace t;
    t.source = path;
    pcap_pkthdr* hdr = nullptr;
    const std::uint8_t* data = nullptr;
    std::size_t inBlock = 0;
    ParsedPacket parsed;
    int rc = 0;
    while ((rc = pcap_next_ex(handle.get(), &hdr, &data)) == 1) {
        RawPacket raw;
        raw.data = data;
        raw.capLen = hdr->caplen;
        raw.wireLen = hdr->len;
        raw.ts = static_cast<TimeNs>(hdr->ts.tv_sec) * kNsPerSec +
                 static_cast<TimeNs>(hdr->ts.tv_usec) * (nano ? 1U : 1000U);
        ++t.frames;
        if (parsePacket(raw, link, parser, parsed, t.anomalies)) {
            parsed.frame =
                nullptr;  // the frame does not outlive this loop; the table never reads it
            parsed.capLen = 0;
            t.packets.push_back(parsed);
        }
        if (++inBlock == kMaxBatch) {
            t.blockEnds.push_back(static_cast<std::uint32_t>(t.packets.size()));
            inBlock = 0;
        }
    }
    if (rc == -1) throw std::runtime_error("reading '" + path + "': " + pcap_geterr(handle.get()));
    if (inBlock != 0) t.blockEnds.push_back(static_cast<std::uint32_t>(t.packets.size()));
    if (t.packets.size() >= UINT32_MAX)
        throw std::runtime_error("capture '" + path + "' has too many packets");
    assignKeyIds(t);
    return t;
}

Sessions computeSessions(const Trace& trace, TimeNs inactive, TimeNs active) {
    return computeSessionsOf(
        trace.packets.size(), trace.keys.size(),
        [&](std::size_t i) {
            const ParsedPacket& p = trace.packets[i];
            return PacketFacts{p.ts, trace.keyId[i], p.tcpFlags, p.fromA};
        },
        inactive, active);
}

std::vector<std::uint32_t> packetsPerKey(const Trace& trace) {
    std::vector<std::uint32_t> n(trace.keys.size(), 0);
    for (std::uint32_t id : trace.keyId) ++n[id];
    return n;
}

std::vector<std::uint8_t> topKeys(const Trace& trace, std::size_t topN) {
    return topKeysOf(packetsPerKey(trace), topN);
}

std::vector<std::uint8_t> topKeysOf(const std::vector<std::uint32_t>& n, std::size_t topN) {
    std::vector<std::uint32_t> ids(n.size());
    std::iota(ids.begin(), ids.end(), 0U);
    topN = std::min(topN, ids.size());
    std::partial_sort(
        ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(topN), ids.end(),
        [&](std::uint32_t a, std::uint32_t b) { return n[a] != n[b] ? n[a] > n[b] : a < b; });
    std::vector<std::uint8_t> top(n.size(), 0);
    for (std::size_t i = 0; i < topN; ++i) top[ids[i]] = 1;
    return top;
}

}  // namespace rowprobe::lab
