// rowprobe-tracegen: writes a pcap and its exact per-flow truth from the `gen` traffic model, so
// every benchmark trace is reproducible from one command line.
//
//   TrafficModel ──GenPacket──▶ writeFrame ──▶ pcap (nanosecond, Ethernet)
//                      └────────▶ flow accounting (timeouts as the cache) ──▶ truth CSV
//
// The truth lists what rowprobe exports from the pcap when its table never evicts a live flow:
// one row per flow, split where the cache's inactive / active timeouts split it (a packet at
// least `inactive` after the flow's last packet, or at least `active` after its first, starts a
// new record: storage/cache/flow_table.hpp, update step 2), oriented by the record's first
// packet. Generated flows never share a key (see
// traffic_model.hpp), so nothing else can merge or split them.
#include <arpa/inet.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "input/gen/traffic_model.hpp"
#include "rowprobe/errors.hpp"
#include "rowprobe/options.hpp"

namespace {

using rowprobe::TimeNs;
using rowprobe::gen::FlowTuple;
using rowprobe::gen::GenConfig;
using rowprobe::gen::GenPacket;

constexpr std::string_view kUsage =
    "usage: rowprobe-tracegen [options] GEN-OPTIONS\n"
    "\n"
    "Writes a pcap (nanosecond timestamps, Ethernet) and an exact per-flow truth CSV from the\n"
    "traffic model of rowprobe's `gen` input. GEN-OPTIONS is the gen input's option string, e.g.\n"
    "  rowprobe-tracegen -w zipf.pcap 'pattern=zipf;flows=100000;packets=10000000;seed=7'\n"
    "\n"
    "options:\n"
    "  -w, --write FILE     pcap file to write (required)\n"
    "  -t, --truth FILE     truth CSV (default: the pcap name with .truth.csv)\n"
    "  --inactive DURATION  inactive timeout the truth assumes (default 30s, the cache default)\n"
    "  --active DURATION    active timeout the truth assumes (default 300s, the cache default)\n"
    "  --case NAME          value of the truth's `case` column (default: the pcap file name)\n"
    "  -h, --help           this text and the GEN-OPTIONS table\n";

constexpr std::string_view kTruthHeader =
    "source,case,pcap,src_ip,src_port,dst_ip,dst_port,proto,packets,packets_rev,bytes,bytes_rev,"
    "bytes_unit,first_ts,last_ts,duration_s,tcp_flags,tcp_flags_rev,label,extra\n";

// One exported record of the truth, before orientation.
struct Segment {
    std::uint64_t serial = 0;
    std::uint32_t number = 0;  // 0 for a flow's first record, 1 after the first split ...
    bool firstForward = true;  // direction of the record's first packet
    TimeNs first = 0;
    TimeNs last = 0;
    std::uint64_t bytes[2] = {0, 0};  // [0] = direction of the first packet
    std::uint32_t packets[2] = {0, 0};
    std::uint8_t flags[2] = {0, 0};
};

struct Args {
    std::string genOptions;
    std::string pcap;
    std::string truth;
    std::string caseName;
    TimeNs inactive = 30 * rowprobe::kNsPerSec;
    TimeNs active = 300 * rowprobe::kNsPerSec;
};

[[noreturn]] void usageError(const std::string& what) {
    std::cerr << "rowprobe-tracegen: error: " << what << "\n\n" << kUsage;
    std::exit(2);
}

TimeNs parseDurationArg(const std::string& flag, const std::string& text) {
    std::uint64_t ns = 0;
    if (!rowprobe::parseDuration(text, ns) || ns == 0) {
        usageError(flag + " must be a positive duration such as 30, 1.5s or 500ms, got '" + text +
                   "'");
    }
    return ns;
}

Args parseArgs(int argc, char** argv) {
    Args a;
    bool haveGen = false;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) usageError(arg + " needs a value");
            return argv[++i];
        };
        if (arg == "-h" || arg == "--help") {
            std::cout << kUsage << "\nGEN-OPTIONS:\n"
                      << rowprobe::formatOptionHelp(rowprobe::gen::genOptionSpecs());
            std::exit(0);
        } else if (arg == "-w" || arg == "--write") {
            a.pcap = value();
        } else if (arg == "-t" || arg == "--truth") {
            a.truth = value();
        } else if (arg == "--inactive") {
            a.inactive = parseDurationArg(arg, value());
        } else if (arg == "--active") {
            a.active = parseDurationArg(arg, value());
        } else if (arg == "--case") {
            a.caseName = value();
        } else if (!arg.empty() && arg[0] == '-') {
            usageError("unknown option '" + arg + "'");
        } else if (haveGen) {
            usageError("give the generator options as one string ('a=1;b=2'), got a second one: '" +
                       arg + "'");
        } else {
            a.genOptions = arg;
            haveGen = true;
        }
    }
    if (a.pcap.empty()) usageError("-w FILE is required");
    if (a.truth.empty()) {
        std::filesystem::path p(a.pcap);
        a.truth = (p.parent_path() / p.stem()).string() + ".truth.csv";
    }
    if (a.caseName.empty()) a.caseName = std::filesystem::path(a.pcap).filename().string();
    return a;
}

class PcapFile {
public:
    explicit PcapFile(const std::string& path) : m_file(std::fopen(path.c_str(), "wb")) {
        if (m_file == nullptr) fail(path, "cannot create");
        std::setvbuf(m_file, nullptr, _IOFBF, 1 << 20);
        const std::uint32_t header[6] = {0xa1b23c4d, 0x00040002, 0, 0, 65535, 1};  // ns, v2.4
        put(header, sizeof header);
        m_path = path;
    }
    ~PcapFile() {
        if (m_file != nullptr) std::fclose(m_file);
    }
    PcapFile(const PcapFile&) = delete;
    PcapFile& operator=(const PcapFile&) = delete;

    void write(TimeNs ts, const std::uint8_t* frame, std::uint32_t capLen, std::uint32_t wireLen) {
        const std::uint32_t rec[4] = {static_cast<std::uint32_t>(ts / rowprobe::kNsPerSec),
                                      static_cast<std::uint32_t>(ts % rowprobe::kNsPerSec), capLen,
                                      wireLen};
        put(rec, sizeof rec);
        put(frame, capLen);
    }
    void close() {
        if (std::fclose(m_file) != 0) {
            m_file = nullptr;
            fail(m_path, "cannot write");
        }
        m_file = nullptr;
    }

private:
    void put(const void* data, std::size_t len) {
        if (std::fwrite(data, 1, len, m_file) != len) fail(m_path, "cannot write");
    }
    [[noreturn]] static void fail(const std::string& path, const std::string& what) {
        throw rowprobe::RuntimeError("rowprobe-tracegen",
                                     what + " '" + path + "': " + std::strerror(errno));
    }
    std::FILE* m_file;
    std::string m_path;
};

std::string addressText(const std::array<std::uint8_t, 16>& a, std::uint8_t version) {
    char buf[INET6_ADDRSTRLEN] = {};
    inet_ntop(version == 6 ? AF_INET6 : AF_INET, a.data(), buf, sizeof buf);
    return buf;
}

std::string timeText(TimeNs t) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%llu.%09llu",
                  static_cast<unsigned long long>(t / rowprobe::kNsPerSec),
                  static_cast<unsigned long long>(t % rowprobe::kNsPerSec));
    return buf;
}

std::string csvField(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) {
        if (c == '"') q += '"';
        q += c;
    }
    return q + "\"";
}

void writeTruth(const Args& args, const GenConfig& config, std::vector<Segment>& segments) {
    std::sort(segments.begin(), segments.end(), [](const Segment& a, const Segment& b) {
        return a.first != b.first
                   ? a.first < b.first
                   : (a.serial != b.serial ? a.serial < b.serial : a.number < b.number);
    });
    std::FILE* f = std::fopen(args.truth.c_str(), "wb");
    if (f == nullptr) {
        throw rowprobe::RuntimeError("rowprobe-tracegen",
                                     "cannot create '" + args.truth + "': " + std::strerror(errno));
    }
    std::setvbuf(f, nullptr, _IOFBF, 1 << 20);
    std::string out(kTruthHeader);
    const std::string prefix = "rowprobe-tracegen," + csvField(args.caseName) + "," +
                               csvField(std::filesystem::path(args.pcap).filename().string()) + ",";
    const std::string label(rowprobe::gen::patternName(config.pattern));
    for (const Segment& s : segments) {
        const FlowTuple t = rowprobe::gen::flowTuple(config, s.serial);
        const bool fwd = s.firstForward;
        const bool tcp = t.proto == 6;
        out += prefix;
        out += addressText(fwd ? t.src : t.dst, t.ipVersion) + ',';
        out += std::to_string(fwd ? t.srcPort : t.dstPort) + ',';
        out += addressText(fwd ? t.dst : t.src, t.ipVersion) + ',';
        out += std::to_string(fwd ? t.dstPort : t.srcPort) + ',';
        out += std::to_string(t.proto) + ',';
        out += std::to_string(s.packets[0]) + ',' + std::to_string(s.packets[1]) + ',';
        out += std::to_string(s.bytes[0]) + ',' + std::to_string(s.bytes[1]) + ",ip,";
        out += timeText(s.first) + ',' + timeText(s.last) + ',' + timeText(s.last - s.first) + ',';
        out += tcp ? std::to_string(s.flags[0]) + ',' + std::to_string(s.flags[1]) + ',' : ",,";
        out += label + ",\"{\"\"serial\"\": " + std::to_string(s.serial) +
               ", \"\"record\"\": " + std::to_string(s.number) + "}\"\n";
        if (out.size() > (1 << 20)) {
            std::fwrite(out.data(), 1, out.size(), f);
            out.clear();
        }
    }
    const bool ok = std::fwrite(out.data(), 1, out.size(), f) == out.size();
    if (std::fclose(f) != 0 || !ok) {
        throw rowprobe::RuntimeError("rowprobe-tracegen", "cannot write '" + args.truth + "'");
    }
}

int run(const Args& args) {
    const GenConfig config = rowprobe::gen::parseGenString(args.genOptions, "GEN-OPTIONS");
    if (config.packets == 0 && config.duration == 0) {
        usageError("the trace needs an end: set packets=N (not 0) or duration=D in GEN-OPTIONS");
    }
    rowprobe::gen::TrafficModel model(config);
    PcapFile pcap(args.pcap);
    std::vector<std::uint8_t> frame(65536);
    std::unordered_map<std::uint64_t, Segment> open;
    open.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(config.flows, 1 << 24)) * 2);
    std::vector<Segment> done;
    std::uint64_t splitInactive = 0;
    std::uint64_t splitActive = 0;
    GenPacket pkt;
    while (model.next(pkt)) {
        const std::uint32_t cap = rowprobe::gen::writeFrame(pkt, frame.data());
        pcap.write(pkt.ts, frame.data(), cap, pkt.frameLen);

        auto [it, fresh] = open.try_emplace(pkt.serial);
        Segment* s = &it->second;
        if (!fresh) {
            const bool idle = pkt.ts - s->last >= args.inactive;
            const bool old = pkt.ts - s->first >= args.active;
            if (idle || old) {
                splitInactive += idle ? 1 : 0;
                splitActive += idle ? 0 : 1;
                const std::uint32_t number = s->number + 1;
                done.push_back(*s);
                *s = Segment{};
                s->number = number;
                fresh = true;
            }
        }
        if (fresh) {
            s->serial = pkt.serial;
            s->firstForward = pkt.forward;
            s->first = pkt.ts;
        }
        const std::size_t dir = pkt.forward == s->firstForward ? 0 : 1;
        s->last = pkt.ts;
        s->packets[dir] += 1;
        s->bytes[dir] += pkt.ipLen();
        s->flags[dir] = static_cast<std::uint8_t>(s->flags[dir] | pkt.tcpFlags);
        if (pkt.last) {  // the model never sends this flow again
            done.push_back(*s);
            open.erase(it);
        }
    }
    pcap.close();
    for (auto& [serial, s] : open) done.push_back(s);
    const std::size_t records = done.size();
    writeTruth(args, config, done);
    std::cerr << "rowprobe-tracegen: " << model.emitted() << " packets to " << args.pcap << ", "
              << records << " flow records to " << args.truth << " (" << splitInactive
              << " split by the inactive timeout, " << splitActive << " by the active timeout)\n";
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    const Args args = parseArgs(argc, argv);
    try {
        return run(args);
    } catch (const rowprobe::ConfigError& e) {
        std::cerr << "rowprobe-tracegen: error: " << e.render() << '\n';
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "rowprobe-tracegen: error: " << e.what() << '\n';
        return 1;
    }
}
