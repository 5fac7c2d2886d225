#include "pcap_input.hpp"

#include <fcntl.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string_view>

#include "rowprobe/errors.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::input {

namespace {

/// The link types the parser decodes (plugins/src/parser.cpp, linkTypeFromPcap).
constexpr std::string_view kSupportedLinkTypes =
    "EN10MB (Ethernet), RAW, IPV4, IPV6 (raw IP), LINUX_SLL, LINUX_SLL2 (Linux cooked), NULL, "
    "LOOP (BSD loopback), PPP, PPP_HDLC, C_HDLC (Cisco HDLC), IEEE802_11, IEEE802_11_RADIO";

constexpr std::string_view kMapModes[] = {"off", "on", "auto"};
// The `map` option's help names them.
static_assert(kMeasureMinFileBytes == std::uint64_t{1} << 30 && kMapCostRatio == 0.85);

constexpr OptionSpec kOptions[] = {
    {.name = "file",
     .shortName = "f",
     .type = OptionType::String,
     .help = "pcap or pcapng file to read, gzip'd or not, or a FIFO ('-' = standard input)"},
    {.name = "ifc",
     .shortName = "i",
     .type = OptionType::String,
     .help = "network interface to capture from live"},
    {.name = "filter",
     .shortName = "F",
     .type = OptionType::String,
     .help = "BPF filter expression (tcpdump syntax)"},
    {.name = "snaplen",
     .shortName = "s",
     .type = OptionType::Int,
     .defaultValue = "65535",
     .help = "bytes kept of each frame",
     .min = 64,
     .max = 262144},
    {.name = "promisc",
     .shortName = "p",
     .type = OptionType::Flag,
     .help = "put the interface into promiscuous mode (ignored for files)"},
    {.name = "timeout",
     .type = OptionType::Duration,
     .defaultValue = "100ms",
     .help = "live read timeout: longest wait of an idle read (ignored for files)",
     .min = 0.001,
     .max = 10},
    {.name = "map",
     .type = OptionType::Choice,
     .defaultValue = "auto",
     .help = "regular uncompressed files: read with read() into reusable buffers (off), through "
             "a memory map, packets pointing into it (on; read() where mapping fails), or "
             "whichever costs less CPU, measured on the file at open (auto: files of 1 GiB and "
             "more; the map only at <= 85 % of read()'s cost, else read())",
     .choices = kMapModes},
    {.name = "verbose",
     .shortName = "v",
     .type = OptionType::Flag,
     .help = "files: say at start-up how the file is read (read() or the map) and why, with "
             "map=auto's measured costs"},
};

constexpr std::uint64_t kStatsPeriodNs = 100'000'000;
/// Live, after a stop request: the longest the input reads on (below the core's one-second
/// grace for an input to end).
constexpr std::uint64_t kDrainLimitNs = 800'000'000;
/// Pipes: the longest a read waits for more once it holds packets, and the poll slice of an
/// empty read (between looks at stop()).
constexpr int kPipeFlushMs = 20;
constexpr int kPipePollMs = 50;

std::uint64_t monotonicNs() noexcept {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * kNsPerSec +
           static_cast<std::uint64_t>(ts.tv_nsec);
}

/// True when `device` is a loopback interface.
bool isLoopback(const std::string& device) {
    pcap_if_t* all = nullptr;
    char errbuf[PCAP_ERRBUF_SIZE] = {};
    if (pcap_findalldevs(&all, errbuf) != 0) return device == "lo";
    bool loopback = false;
    for (const pcap_if_t* d = all; d != nullptr; d = d->next) {
        if (d->name != nullptr && device == d->name) loopback = (d->flags & PCAP_IF_LOOPBACK) != 0;
    }
    pcap_freealldevs(all);
    return loopback;
}

/// The DLT_ value libpcap's run-time functions take for a LINKTYPE_ value stored in a file
/// (they differ for raw IP: LINKTYPE_RAW 101 is DLT_RAW, 12 on Linux).
int dltOfLinkType(std::uint32_t linkType) {
    return linkType == 101 ? DLT_RAW : static_cast<int>(linkType);
}

std::string dltText(int dlt) {
    const char* name = pcap_datalink_val_to_name(dlt);
    std::string text = name != nullptr ? std::string(name) : std::string("unknown");
    const char* description = pcap_datalink_val_to_description(dlt);
    if (description != nullptr) text += " (" + std::string(description) + ")";
    return text + ", DLT " + std::to_string(dlt);
}

}  // namespace

PcapInput::PcapInput(const Options& options)
    : m_snaplen(static_cast<std::uint32_t>(options.getInt("snaplen"))) {
    const bool hasFile = options.explicitlySet("file");
    const bool hasIfc = options.explicitlySet("ifc");
    if (hasFile == hasIfc) {
        options.fail(hasFile ? "ifc" : "file", "give exactly one of 'file' or 'ifc'");
    }
    try {
        if (hasFile) {
            openFile(options);
        } else {
            openLive(options);
        }
        if (!m_stream) checkLinkType(options);
        installFilter(options);
    } catch (...) {
        if (m_filter.bf_insns != nullptr) pcap_freecode(&m_filter);
        if (m_handle != nullptr) pcap_close(m_handle);
        if (m_wakeFd >= 0) close(m_wakeFd);
        m_handle = nullptr;
        m_wakeFd = -1;
        throw;
    }
    if (m_live) m_nextStatsNs = monotonicNs() + kStatsPeriodNs;
}

PcapInput::~PcapInput() {
    if (m_filter.bf_insns != nullptr) pcap_freecode(&m_filter);
    for (auto& [dlt, program] : m_otherFilters) pcap_freecode(&program);
    if (m_handle != nullptr) pcap_close(m_handle);
    if (m_wakeFd >= 0) close(m_wakeFd);
}

namespace {

/// libpcap reads a stream the classic reader declined (pcapng, garbage for its error message)
/// through a FILE* that first replays the bytes already consumed, then reads the ByteSource
/// (so pipes and gzip work for pcapng too, with no temporary file).
struct Replay {
    ByteSource* source;
    std::string prefix;
};

ssize_t replayRead(void* cookie, char* buf, std::size_t size) {
    auto* r = static_cast<Replay*>(cookie);
    if (!r->prefix.empty()) {
        const std::size_t n = std::min(size, r->prefix.size());
        std::memcpy(buf, r->prefix.data(), n);
        r->prefix.erase(0, n);
        return static_cast<ssize_t>(n);
    }
    for (;;) {
        const long n = r->source->read(reinterpret_cast<std::uint8_t*>(buf), size, -1);
        if (n >= 0) return n;
        if (n == ByteSource::kError) {
            errno = EIO;
            return -1;
        }
    }
}

int replayClose(void* cookie) {
    delete static_cast<Replay*>(cookie);
    return 0;
}

}  // namespace

void PcapInput::openFile(const Options& options) {
    m_source = options.getString("file");
    const int fd =
        m_source == "-" ? ::dup(STDIN_FILENO) : ::open(m_source.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) options.fail("file", "cannot read " + m_source + ": " + std::strerror(errno));
    auto source = std::make_unique<ByteSource>(fd, m_source);
    m_regularFile = source->regular();
    const std::string map = options.getString("map");
    const MapMode mapMode = map == "off" ? MapMode::Off : map == "on" ? MapMode::On : MapMode::Auto;
    auto stream = std::make_unique<PcapStream>(std::move(source), -1, mapMode);
    if (stream->valid() && options.getFlag("verbose")) {
        std::fprintf(stderr, "rowprobe: input 'pcap': '%s' is %s\n", m_source.c_str(),
                     stream->describeReadMethod().c_str());
    }
    if (stream->valid()) {
        const bool noInterfaceYet = stream->pcapng() && stream->linkType() == 0xffffffffU;
        if (!noInterfaceYet && !linkTypeFromPcap(static_cast<int>(stream->linkType()), m_link)) {
            options.fail("file",
                         "link type " + dltText(dltOfLinkType(stream->linkType())) +
                             " is not supported; supported: " + std::string(kSupportedLinkTypes));
        }
        m_stream = std::move(stream);
        m_streamDlt = m_stream->linkType();
        m_streamLink = m_link;
        if (options.explicitlySet("filter")) {
            m_filterText = options.getString("filter");
            // Compiled for the file's link type, applied with pcap_offline_filter in readStream.
            m_handle = pcap_open_dead_with_tstamp_precision(
                dltOfLinkType(m_stream->linkType()), static_cast<int>(PcapStream::kMaxCapLen),
                PCAP_TSTAMP_PRECISION_NANO);
            if (m_handle == nullptr) options.fail("filter", "cannot prepare the BPF filter");
        }
        return;
    }
    // Not classic pcap: libpcap reads it (pcapng), or names what it is not.
    m_libpcapSource = stream->releaseSource();
    auto* replay = new Replay{m_libpcapSource.get(), stream->header()};
    std::FILE* fp = fopencookie(
        replay, "r", {.read = replayRead, .write = nullptr, .seek = nullptr, .close = replayClose});
    if (fp == nullptr) {
        delete replay;
        options.fail("file", "cannot read '" + m_source + "': " + std::strerror(errno));
    }
    char errbuf[PCAP_ERRBUF_SIZE] = {};
    m_handle = pcap_fopen_offline_with_tstamp_precision(fp, PCAP_TSTAMP_PRECISION_NANO, errbuf);
    if (m_handle == nullptr) {
        std::fclose(fp);
        options.fail("file", "cannot read '" + m_source + "': " + errbuf);
    }
    m_nanoTs = pcap_get_tstamp_precision(m_handle) == PCAP_TSTAMP_PRECISION_NANO;
}

const bpf_program* PcapInput::filterFor(std::uint32_t dlt) {
    if (dlt == m_stream->linkType()) return &m_filter;
    for (auto& [type, program] : m_otherFilters) {
        if (type == dlt) return &program;
    }
    // pcapng: an interface of another link type; the filter is compiled for it on first use.
    pcap_t* dead = pcap_open_dead_with_tstamp_precision(
        dltOfLinkType(dlt), static_cast<int>(PcapStream::kMaxCapLen), PCAP_TSTAMP_PRECISION_NANO);
    if (dead == nullptr) throw RuntimeError("input 'pcap'", "cannot prepare the BPF filter");
    bpf_program program{};
    const int rc = pcap_compile(dead, &program, m_filterText.c_str(), 1, PCAP_NETMASK_UNKNOWN);
    const std::string why = rc != 0 ? pcap_geterr(dead) : "";
    pcap_close(dead);
    if (rc != 0) {
        throw RuntimeError("input 'pcap'",
                           "filter '" + m_filterText + "' does not apply to link type " +
                               dltText(dltOfLinkType(dlt)) + " of '" + m_source + "': " + why);
    }
    m_otherFilters.emplace_back(dlt, program);
    return &m_otherFilters.back().second;
}

InputPlugin::Status PcapInput::readStream(PacketBlock& block) {
    m_stream->beginRead();
    const bool regular = m_stream->regular();
    block.link = m_streamLink;
    if (m_hasPending) {  // the first packet of another link type than the previous block's
        block.link = m_pendingLink;
        block.packets[block.count++] = m_pending;
        m_hasPending = false;
    }
    while (!block.full()) {
        RawPacket& out = block.packets[block.count];
        // A pipe: once packets are in hand, wait only briefly for the next record, so a slow
        // writer's packets are delivered (and their flows expire) without a whole block.
        const int waitMs = regular ? -1 : (block.count > 0 ? kPipeFlushMs : kPipePollMs);
        const PcapStream::Result r = m_stream->next(out, m_snaplen, waitMs);
        if (r == PcapStream::Result::Packet) {
            const std::uint32_t dlt = m_stream->packetLinkType();
            if (dlt != m_streamDlt) {  // pcapng: another interface's link type
                LinkType link{};
                if (!linkTypeFromPcap(static_cast<int>(dlt), link)) {
                    ++m_unsupportedLink;
                    continue;
                }
                m_streamDlt = dlt;
                m_streamLink = link;
            }
            if (m_filter.bf_insns != nullptr) {
                const pcap_pkthdr header{.ts = {}, .caplen = out.capLen, .len = out.wireLen};
                if (pcap_offline_filter(filterFor(dlt), &header, out.data) == 0) continue;
            }
            if (block.count == 0) block.link = m_streamLink;
            if (m_streamLink != block.link) {  // a block carries one link type
                m_pending = out;
                m_pendingLink = m_streamLink;
                m_hasPending = true;
                break;
            }
            ++block.count;
            continue;
        }
        if (r == PcapStream::Result::Budget) {
            if (block.count > 0) break;
            m_stream->renewBudget();  // everything so far was filtered out: nothing delivered
            continue;
        }
        if (r == PcapStream::Result::Wait) {
            if (block.count > 0) break;
            if (m_stopRequested.load(std::memory_order_relaxed)) {
                m_ended = true;
                break;
            }
            continue;
        }
        if (r == PcapStream::Result::Error) {
            m_error = "reading '" + m_source + "': " + m_stream->error();
            if (block.count == 0) {
                warnAnomalies();
                throw RuntimeError("input 'pcap'", m_error);
            }
        } else {
            m_ended = true;
        }
        break;
    }
    if (m_ended) warnAnomalies();
    if (block.count == 0) return Status::End;
    m_received.fetch_add(block.count, std::memory_order_relaxed);
    return Status::Ok;
}

void PcapInput::warnAnomalies() noexcept {
    if (m_warned || !m_stream) return;
    m_warned = true;
    if (m_stream->oversized() != 0) {
        std::fprintf(stderr,
                     "rowprobe: warning: input 'pcap': '%s': %llu records were captured longer "
                     "than the file's snaplen %u; read in full\n",
                     m_source.c_str(), static_cast<unsigned long long>(m_stream->oversized()),
                     m_stream->fileSnaplen());
    }
    if (m_unsupportedLink != 0) {
        std::fprintf(stderr,
                     "rowprobe: warning: input 'pcap': '%s': %llu packets on interfaces of an "
                     "unsupported link type were skipped\n",
                     m_source.c_str(), static_cast<unsigned long long>(m_unsupportedLink));
    }
    if (m_stream->badTimestamps() != 0) {
        std::fprintf(stderr,
                     "rowprobe: warning: input 'pcap': '%s': %llu records had a sub-second "
                     "timestamp field of a second or more; carried into the seconds\n",
                     m_source.c_str(), static_cast<unsigned long long>(m_stream->badTimestamps()));
    }
}

void PcapInput::openLive(const Options& options) {
    m_source = options.getString("ifc");
    m_live = true;
    m_ifindex = if_nametoindex(m_source.c_str());
    char errbuf[PCAP_ERRBUF_SIZE] = {};
    m_handle = pcap_create(m_source.c_str(), errbuf);
    if (m_handle == nullptr)
        options.fail("ifc", "cannot open interface '" + m_source + "': " + errbuf);
    const auto timeoutMs = static_cast<int>(options.getDurationNs("timeout") / 1'000'000);
    m_timeoutMs = timeoutMs < 1 ? 1 : timeoutMs;
    pcap_set_snaplen(m_handle, static_cast<int>(m_snaplen));
    pcap_set_promisc(m_handle, options.getFlag("promisc") ? 1 : 0);
    pcap_set_timeout(m_handle, m_timeoutMs);  // also the kernel's block retire timeout
    // Nanosecond stamps where the platform has them; microseconds otherwise.
    pcap_set_tstamp_precision(m_handle, PCAP_TSTAMP_PRECISION_NANO);
    const int rc = pcap_activate(m_handle);
    if (rc < 0) {
        std::string reason = pcap_statustostr(rc);
        const std::string detail = pcap_geterr(m_handle);
        if (!detail.empty() && detail != reason) reason += ": " + detail;
        options.fail("ifc", "cannot capture on '" + m_source + "': " + reason);
    }
    m_nanoTs = pcap_get_tstamp_precision(m_handle) == PCAP_TSTAMP_PRECISION_NANO;
    // Non-blocking reads plus our own poll: with TPACKET_V3, a blocking pcap_next_ex on an idle
    // interface never returns (the kernel's block timer runs only once a packet arrived), and
    // the worker needs Timeout to expire flows. The eventfd lets stop() wake the poll.
    m_pcapFd = pcap_get_selectable_fd(m_handle);
    if (m_pcapFd < 0) options.fail("ifc", "'" + m_source + "' has no selectable descriptor");
    if (pcap_setnonblock(m_handle, 1, errbuf) != 0) {
        options.fail("ifc", "cannot make '" + m_source + "' non-blocking: " + errbuf);
    }
    if (isLoopback(m_source)) {
        // The kernel hands a packet socket on loopback every packet twice, as sent and as
        // received; libpcap discards the sent copy only after it took a ring slot (and, when
        // the ring is full, was counted as a drop). Refuse sent copies in the kernel (Linux
        // 4.20+; on older kernels libpcap's own discard still applies, with doubled drops).
        const int one = 1;
        setsockopt(m_pcapFd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof one);
    }
    m_wakeFd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (m_wakeFd < 0) options.fail("ifc", std::string("eventfd: ") + std::strerror(errno));
}

bool PcapInput::waitReadable() noexcept {
    pollfd fds[2] = {{.fd = m_pcapFd, .events = POLLIN, .revents = 0},
                     {.fd = m_wakeFd, .events = POLLIN, .revents = 0}};
    const int rc = poll(fds, 2, m_timeoutMs);
    if (m_stopRequested.load(std::memory_order_relaxed)) {
        beginDrain();
        return true;
    }
    return rc > 0;
}

void PcapInput::beginDrain() noexcept {
    if (m_draining) return;
    m_draining = true;
    const std::uint64_t now = monotonicNs();
    m_drainWaitNs = now + static_cast<std::uint64_t>(std::min(m_timeoutMs, 250) + 50) * 1'000'000;
    m_drainEndNs = now + kDrainLimitNs;
}

void PcapInput::checkLinkType(const Options& options) {
    const int dlt = pcap_datalink(m_handle);
    if (!linkTypeFromPcap(dlt, m_link)) {
        options.fail(m_live ? "ifc" : "file",
                     "link type " + dltText(dlt) +
                         " is not supported; supported: " + std::string(kSupportedLinkTypes));
    }
}

void PcapInput::installFilter(const Options& options) {
    if (!options.explicitlySet("filter")) return;
    const std::string expression = options.getString("filter");
    bpf_u_int32 net = 0;
    bpf_u_int32 mask = PCAP_NETMASK_UNKNOWN;
    char errbuf[PCAP_ERRBUF_SIZE] = {};
    if (m_live && pcap_lookupnet(m_source.c_str(), &net, &mask, errbuf) != 0) {
        mask = PCAP_NETMASK_UNKNOWN;
    }
    bpf_program program{};
    if (pcap_compile(m_handle, &program, expression.c_str(), 1, mask) != 0) {
        options.fail("filter", "invalid BPF filter: " + std::string(pcap_geterr(m_handle)));
    }
    if (m_stream) {  // the classic reader applies it itself (pcap_offline_filter)
        m_filter = program;
        return;
    }
    const int rc = pcap_setfilter(m_handle, &program);
    pcap_freecode(&program);
    if (rc != 0) {
        options.fail("filter", "cannot install BPF filter: " + std::string(pcap_geterr(m_handle)));
    }
}

InputPlugin::Status PcapInput::read(PacketBlock& block) {
    block.link = m_link;
    if (m_stopRequested.load(std::memory_order_relaxed)) {
        if (!m_live) {
            m_ended = true;  // files and pipes end at once
        } else {
            beginDrain();
            if (monotonicNs() >= m_drainEndNs) m_ended = true;
        }
    }
    if (m_ended) return Status::End;
    if (!m_error.empty()) throw RuntimeError("input 'pcap'", m_error);

    if (m_stream) return readStream(block);

    const std::size_t before = block.count;
    const std::uint32_t tsScale = m_nanoTs ? 1 : 1000;
    bool timedOut = false;
    bool waited = false;
    if (m_pendingData != nullptr) {
        // Fits: the block is empty and the frame was cut to the arena size below.
        block.append(m_pendingData, m_pendingHeader.caplen, m_pendingHeader.len,
                     static_cast<TimeNs>(m_pendingHeader.ts.tv_sec) * kNsPerSec +
                         static_cast<TimeNs>(m_pendingHeader.ts.tv_usec) * tsScale);
        m_pendingData = nullptr;
    }
    while (!block.full()) {
        pcap_pkthdr* header = nullptr;
        const u_char* data = nullptr;
        const int rc = pcap_next_ex(m_handle, &header, &data);
        if (rc == 1) {
            std::uint32_t capLen = header->caplen < m_snaplen ? header->caplen : m_snaplen;
            if (capLen > PacketBlock::kArenaBytes) capLen = PacketBlock::kArenaBytes;
            const TimeNs ts = static_cast<TimeNs>(header->ts.tv_sec) * kNsPerSec +
                              static_cast<TimeNs>(header->ts.tv_usec) * tsScale;
            if (!block.append(data, capLen, header->len, ts)) {
                m_pendingHeader = *header;
                m_pendingHeader.caplen = capLen;
                m_pendingData = data;
                break;
            }
            continue;
        }
        if (rc == 0) {                         // live: nothing buffered right now
            if (block.count != before) break;  // deliver what we have without waiting
            if (m_draining) {  // stopped: wait for the block the kernel is filling, once
                const std::uint64_t now = monotonicNs();
                if (now >= m_drainWaitNs) {
                    m_ended = true;
                    break;
                }
                pollfd fd{.fd = m_pcapFd, .events = POLLIN, .revents = 0};
                poll(&fd, 1, static_cast<int>((m_drainWaitNs - now) / 1'000'000) + 1);
                continue;
            }
            if (waited || !waitReadable()) {
                timedOut = !m_ended;
                break;
            }
            waited = true;
            continue;
        }
        if (rc == PCAP_ERROR_BREAK) {  // end of the file
            m_ended = true;
            break;
        }
        // Read error (truncated file, interface gone): deliver what this block holds first.
        m_error = "reading '" + m_source + "': " + pcap_geterr(m_handle);
        if (block.count == before) throw RuntimeError("input 'pcap'", m_error);
        break;
    }

    const std::size_t got = block.count - before;
    if (got != 0) m_received.fetch_add(got, std::memory_order_relaxed);
    if (m_live && (m_ended || timedOut || monotonicNs() >= m_nextStatsNs)) refreshKernelStats();
    if (got != 0) return Status::Ok;
    return m_ended ? Status::End : Status::Timeout;
}

void PcapInput::refreshKernelStats() noexcept {
    m_nextStatsNs = monotonicNs() + kStatsPeriodNs;
    pcap_stat ps{};
    if (pcap_stats(m_handle, &ps) != 0) return;
    m_kernelDrops.store(ps.ps_drop, std::memory_order_relaxed);
    m_ifaceDrops.store(ps.ps_ifdrop, std::memory_order_relaxed);
}

void PcapInput::stop() noexcept {
    m_stopRequested.store(true, std::memory_order_relaxed);
    if (m_wakeFd >= 0) {
        const std::uint64_t one = 1;
        [[maybe_unused]] const ssize_t n = ::write(m_wakeFd, &one, sizeof one);
    }
}

InputStats PcapInput::stats() const {
    return {.received = m_received.load(std::memory_order_relaxed),
            .kernelDrops = m_kernelDrops.load(std::memory_order_relaxed),
            .ifaceDrops = m_ifaceDrops.load(std::memory_order_relaxed)};
}

ROWPROBE_REGISTER_PLUGIN(
    PluginKind::Input, PcapInput,
    {.name = "pcap",
     .summary = "packets from a pcap/pcapng file (.gz too), a pipe or a live interface (libpcap)",
     .options = kOptions});

}  // namespace rowprobe::input
