#include "sim_trace.hpp"

#include <array>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <unordered_map>

#include "cache/hash.hpp"

namespace rowprobe::tuner {

namespace {

constexpr std::array<char, 8> kMagic = {'R', 'P', 'T', 'R', 'A', 'C', 'E', '1'};
constexpr std::size_t kHeaderSize = 64;
constexpr std::uint64_t kHashMask = (std::uint64_t{1} << 56) - 1;
constexpr std::uint64_t kTsMask = (std::uint64_t{1} << 48) - 1;
constexpr unsigned kMaxEmptyRun = 63;

void putU64(std::uint8_t* p, std::uint64_t v) {
    for (int i = 0; i < 8; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}
std::uint64_t getU64(const std::uint8_t* p) {
    std::uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
    return v;
}

}  // namespace

SimTrace fromCapture(const lab::Trace& trace, const std::string& hash, std::uint64_t seed,
                     storage::AdaptiveClassifier classifier) {
    const storage::HashFunction* hf = storage::findHashFunction(hash);
    if (hf == nullptr) throw std::runtime_error("unknown hash function '" + hash + "'");
    SimTrace t;
    t.source = trace.source;
    t.hash = hash;
    t.seed = seed;
    t.classifier = classifier;
    t.keys = static_cast<std::uint32_t>(trace.keys.size());
    t.blockEnds = trace.blockEnds;
    std::vector<std::uint64_t> keyHash(trace.keys.size());
    for (std::size_t k = 0; k < trace.keys.size(); ++k) keyHash[k] = hf->key(trace.keys[k], seed);
    t.packets.resize(trace.packets.size());
    for (std::size_t i = 0; i < trace.packets.size(); ++i) {
        const ParsedPacket& p = trace.packets[i];
        t.packets[i] = SimPacket{
            p.ts,           keyHash[trace.keyId[i]],
            trace.keyId[i], static_cast<std::uint8_t>(storage::classifyPacket(classifier, p)),
            p.tcpFlags,     p.fromA};
    }
    return t;
}

void writeCompact(const SimTrace& trace, const std::string& path) {
    std::ofstream f(path, std::ios::binary);
    if (!f) throw std::runtime_error("cannot write '" + path + "'");
    const TimeNs base = trace.packets.empty() ? 0 : trace.packets.front().ts;
    std::array<std::uint8_t, kHeaderSize> h{};
    std::memcpy(h.data(), kMagic.data(), kMagic.size());
    putU64(h.data() + 8, trace.packets.size());
    putU64(h.data() + 16, trace.seed);
    putU64(h.data() + 24, base);
    if (trace.hash.size() > 15)
        throw std::runtime_error("hash name too long for the compact format");
    std::memcpy(h.data() + 32, trace.hash.data(), trace.hash.size());
    h[48] = static_cast<std::uint8_t>(trace.classifier);
    // Leading empty blocks (before the first packet) in byte 49.
    unsigned leading = 0;
    while (leading < trace.blockEnds.size() && trace.blockEnds[leading] == 0) ++leading;
    h[49] = static_cast<std::uint8_t>(std::min(leading, 255U));
    f.write(reinterpret_cast<const char*>(h.data()), h.size());

    // Per packet: does a block end after it, and how many empty blocks follow.
    std::vector<std::uint8_t> ends(trace.packets.size(), 0);
    std::vector<std::uint8_t> empties(trace.packets.size(), 0);
    for (std::size_t b = leading; b < trace.blockEnds.size(); ++b) {
        const std::uint32_t e = trace.blockEnds[b];
        if (b > 0 && e == trace.blockEnds[b - 1]) {
            if (e > 0 && empties[e - 1] < kMaxEmptyRun) ++empties[e - 1];
        } else if (e > 0) {
            ends[e - 1] = 1;
        }
    }
    std::vector<std::uint8_t> buf(16 * 4096);
    std::size_t used = 0;
    for (std::size_t i = 0; i < trace.packets.size(); ++i) {
        const SimPacket& p = trace.packets[i];
        const TimeNs delta = p.ts >= base ? p.ts - base : 0;
        if (delta > kTsMask)
            throw std::runtime_error("capture longer than 2^48 ns: cannot write a compact trace");
        const std::uint64_t w0 = delta | (std::uint64_t{p.tcpFlags} << 48) |
                                 (std::uint64_t{p.fromA} << 56) | (std::uint64_t{ends[i]} << 57) |
                                 (std::uint64_t{empties[i]} << 58);
        const std::uint64_t w1 = (p.hash & kHashMask) | (std::uint64_t{p.cls} << 56);
        putU64(buf.data() + used, w0);
        putU64(buf.data() + used + 8, w1);
        used += 16;
        if (used == buf.size()) {
            f.write(reinterpret_cast<const char*>(buf.data()), static_cast<std::streamsize>(used));
            used = 0;
        }
    }
    f.write(reinterpret_cast<const char*>(buf.data()), static_cast<std::streamsize>(used));
    if (!f) throw std::runtime_error("cannot write '" + path + "'");
}

bool isCompact(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::array<char, 8> m{};
    return f.read(m.data(), m.size()) && m == kMagic;
}

SimTrace readCompact(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw std::runtime_error("cannot read '" + path + "'");
    std::array<std::uint8_t, kHeaderSize> h{};
    if (!f.read(reinterpret_cast<char*>(h.data()), h.size()) ||
        std::memcmp(h.data(), kMagic.data(), 8) != 0) {
        throw std::runtime_error("'" + path + "' is not a rowprobe compact trace (RPTRACE1)");
    }
    SimTrace t;
    t.source = path;
    const std::uint64_t count = getU64(h.data() + 8);
    t.seed = getU64(h.data() + 16);
    const TimeNs base = getU64(h.data() + 24);
    t.hash.assign(reinterpret_cast<const char*>(h.data() + 32),
                  strnlen(reinterpret_cast<const char*>(h.data() + 32), 16));
    if (h[48] > static_cast<std::uint8_t>(storage::AdaptiveClassifier::J48v1)) {
        throw std::runtime_error("'" + path + "': unknown classifier id " + std::to_string(h[48]));
    }
    t.classifier = static_cast<storage::AdaptiveClassifier>(h[48]);
    for (unsigned i = 0; i < h[49]; ++i) t.blockEnds.push_back(0);
    if (count >= UINT32_MAX) throw std::runtime_error("'" + path + "': too many packets");
    t.packets.resize(count);
    std::unordered_map<std::uint64_t, std::uint32_t> ids;
    std::vector<std::uint8_t> buf(16 * 4096);
    std::size_t i = 0;
    while (i < count) {
        const std::size_t n = std::min<std::size_t>(buf.size() / 16, count - i);
        if (!f.read(reinterpret_cast<char*>(buf.data()), static_cast<std::streamsize>(n * 16))) {
            throw std::runtime_error("'" + path + "' is truncated (" + std::to_string(i) + " of " +
                                     std::to_string(count) + " packets)");
        }
        for (std::size_t j = 0; j < n; ++j, ++i) {
            const std::uint64_t w0 = getU64(buf.data() + 16 * j);
            const std::uint64_t w1 = getU64(buf.data() + 16 * j + 8);
            SimPacket& p = t.packets[i];
            p.ts = base + (w0 & kTsMask);
            p.tcpFlags = static_cast<std::uint8_t>(w0 >> 48);
            p.fromA = ((w0 >> 56) & 1U) != 0;
            p.hash = w1 & kHashMask;
            p.cls = static_cast<std::uint8_t>(w1 >> 56);
            const auto [it, inserted] =
                ids.try_emplace(p.hash, static_cast<std::uint32_t>(ids.size()));
            p.key = it->second;
            if (((w0 >> 57) & 1U) != 0) t.blockEnds.push_back(static_cast<std::uint32_t>(i + 1));
            for (std::uint64_t e = 0; e < (w0 >> 58); ++e)
                t.blockEnds.push_back(static_cast<std::uint32_t>(i + 1));
        }
    }
    if (t.blockEnds.empty() || t.blockEnds.back() != count)
        t.blockEnds.push_back(static_cast<std::uint32_t>(count));
    t.keys = static_cast<std::uint32_t>(ids.size());
    return t;
}

lab::Sessions sessionsOf(const SimTrace& trace, TimeNs inactive, TimeNs active) {
    return lab::computeSessionsOf(
        trace.packets.size(), trace.keys,
        [&](std::size_t i) {
            const SimPacket& p = trace.packets[i];
            return lab::PacketFacts{p.ts, p.key, p.tcpFlags, p.fromA};
        },
        inactive, active);
}

}  // namespace rowprobe::tuner
