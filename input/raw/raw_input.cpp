// Input plugin `raw`: AF_PACKET socket with a TPACKET_V3 memory-mapped RX ring.
//
//   kernel ──▶ ring: [block 0][block 1] ... [block N-1]     each block: header + packets
//                        ▲ m_blockIndex (next block to read, round robin)
//   read(): when the block at m_blockIndex is TP_STATUS_USER, copy its packets into the
//           caller's PacketBlock arena (up to 64), then hand the ring block back
//           (TP_STATUS_KERNEL) as soon as its last packet is copied.
//
// * Copy, not zero-copy: the core recycles PacketBlocks without telling the input, so a ring
//   block cannot be held until the worker is done with it. The copy is one memcpy of at most
//   the snap length per packet (~50-100 ns for a 1500-byte frame), and returning ring blocks
//   at once keeps the ring from freezing.
// * A ring block may hold more than 64 packets: the cursor (m_block, m_packet, m_left)
//   survives between read() calls, so a block is spread over several PacketBlocks.
// * Snap length: each frame takes at most `frame-size` bytes of ring space (the TPACKET
//   frame slot); a one-instruction classic BPF program (`ret #snaplen`) makes the kernel
//   truncate longer frames before they reach the ring. The wire length stays exact.
// * VLAN: the kernel strips the outer 802.1Q tag on most NICs (and veth) and reports it in
//   tp_vlan_tci; it is written back into the copied frame so flows keep their VLAN id.
// * Outgoing frames: on `lo` every packet is seen twice (leaving and entering). As on a
//   mirror port, where all traffic is incoming, only incoming frames are captured unless
//   `outgoing` is set: PACKET_IGNORE_OUTGOING keeps them out of the ring, and a check on
//   sll_pkttype drops those a fanout group still delivers (its hook ignores that option).
// * Fanout: with `fanout=ID`, every raw input with that ID joins one PACKET_FANOUT_HASH group
//   on the interface. The kernel's flow hash for fanout is symmetric (addresses and ports
//   sorted), so both directions of a TCP/UDP flow reach the same input, i.e. the same queue.
// * Stopping: after stop(), read() hands over what the ring held at the request and then
//   returns End (the core reads on until End). That is every block already retired to us and
//   the block the kernel is filling, which it retires when its timer (`timeout`) fires: read()
//   waits one timeout (at most 250 ms) plus 50 ms for it, and on (a loaded machine runs the
//   timer late) while that block still holds packets, up to kDrainLimit after the first
//   drain step (below the core's one-second grace). At most blocks + 1 ring blocks are taken
//   after the request, so traffic that keeps arriving cannot keep the input running.
// * Threads: read() runs on the input thread only. stop() writes an eventfd that wakes the
//   poll() at once; stats() takes a mutex because reading PACKET_STATISTICS resets the
//   kernel's counters, which are therefore accumulated here.
#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "rowprobe/errors.hpp"
#include "rowprobe/options.hpp"
#include "rowprobe/plugin.hpp"
#include "rowprobe/registry.hpp"

namespace rowprobe::input {

namespace {

constexpr OptionSpec kOptions[] = {
    {.name = "ifc",
     .shortName = "i",
     .type = OptionType::String,
     .help = "network interface to capture from",
     .required = true},
    {.name = "blocks",
     .shortName = "b",
     .type = OptionType::Int,
     .defaultValue = "64",
     .help = "ring blocks (ring memory = blocks x block-size)",
     .min = 2,
     .max = 65536},
    {.name = "block-size",
     .shortName = "s",
     .type = OptionType::Int,
     .defaultValue = "1048576",
     .help = "bytes per ring block, a power of two",
     .min = 4096,
     .max = 1 << 28},
    {.name = "frame-size",
     .shortName = "f",
     .type = OptionType::Int,
     .defaultValue = "2048",
     .help = "ring bytes per frame incl. a 96-byte header; longer frames are truncated",
     .min = 128,
     .max = 131072},
    {.name = "fanout",
     .shortName = "F",
     .type = OptionType::Int,
     .help = "PACKET_FANOUT_HASH group id shared by the raw inputs of one interface",
     .min = 0,
     .max = 65535},
    {.name = "timeout",
     .shortName = "t",
     .type = OptionType::Duration,
     .defaultValue = "100ms",
     .help = "poll timeout and block retire timeout (longest a packet waits in the ring)",
     .min = 0.001,
     .max = 60},
    {.name = "promisc",
     .shortName = "p",
     .type = OptionType::Flag,
     .defaultValue = "true",
     .help = "put the interface into promiscuous mode while capturing"},
    {.name = "outgoing",
     .shortName = "o",
     .type = OptionType::Flag,
     .defaultValue = "false",
     .help = "also capture frames sent by this host (on lo: every packet twice)"},
};

/// Ring bytes in front of the frame: tpacket3_hdr and sockaddr_ll, then the MAC header
/// placed so the network header is aligned (tpacket_rcv: netoff = ALIGN(hdrlen + 16)).
constexpr std::uint32_t kFrameOverhead =
    TPACKET_ALIGN(TPACKET_ALIGN(sizeof(tpacket3_hdr)) + sizeof(sockaddr_ll) + 16);

std::string errnoText(const std::string& what, int err) { return what + ": " + std::strerror(err); }

/// The longest a drain after stop() waits for the kernel to retire the block it is filling
/// (with a retire timeout of 250 ms or less; a longer one gets its first wait alone).
constexpr auto kDrainLimit = std::chrono::milliseconds(800);

std::vector<std::string> interfaceNames() {
    std::vector<std::string> names;
    if (struct if_nameindex* list = if_nameindex()) {
        for (const struct if_nameindex* p = list; p->if_index != 0; ++p)
            names.emplace_back(p->if_name);
        if_freenameindex(list);
    }
    return names;
}

class FileDescriptor {
public:
    explicit FileDescriptor(int fd = -1) noexcept : m_fd(fd) {}
    ~FileDescriptor() {
        if (m_fd >= 0) ::close(m_fd);
    }
    FileDescriptor(const FileDescriptor&) = delete;
    FileDescriptor& operator=(const FileDescriptor&) = delete;
    int get() const noexcept { return m_fd; }
    void reset(int fd) noexcept {
        if (m_fd >= 0) ::close(m_fd);
        m_fd = fd;
    }

private:
    int m_fd;
};

/// The mmap'ed ring, unmapped on destruction (also when the constructor throws later on).
class MappedRing {
public:
    MappedRing() = default;
    ~MappedRing() {
        if (m_base != nullptr) ::munmap(m_base, m_bytes);
    }
    MappedRing(const MappedRing&) = delete;
    MappedRing& operator=(const MappedRing&) = delete;
    void reset(void* base, std::size_t bytes) noexcept {
        m_base = static_cast<std::uint8_t*>(base);
        m_bytes = bytes;
    }
    std::uint8_t* base() const noexcept { return m_base; }

private:
    std::uint8_t* m_base = nullptr;
    std::size_t m_bytes = 0;
};

}  // namespace

class RawInput final : public InputPlugin {
public:
    explicit RawInput(const Options& options);
    ~RawInput() override = default;
    RawInput(const RawInput&) = delete;
    RawInput& operator=(const RawInput&) = delete;

    Status read(PacketBlock& block) override;
    void stop() noexcept override;
    InputStats stats() const override;
    bool live() const noexcept override { return true; }
    std::uint32_t interfaceIndex() const noexcept override { return m_ifindex; }

private:
    tpacket_block_desc* blockAt(std::uint32_t index) const noexcept {
        return reinterpret_cast<tpacket_block_desc*>(m_ring.base() +
                                                     std::size_t{index} * m_blockSize);
    }
    /// Copies the packets of the ring block in hand into `block`; returns false when `block`
    /// filled up before the ring block was exhausted.
    bool drainRingBlock(PacketBlock& block) noexcept;
    void releaseRingBlock() noexcept;
    /// Waits until the ring has a block for us or `timeoutMs` passed; false on timeout.
    bool waitForBlock(int timeoutMs, bool watchStop);
    /// After a socket error or an idle timeout: clears the socket's pending error (so poll
    /// does not report it again and again), warns once when the link went down (or is up
    /// again), throws RuntimeError when the interface was deleted.
    void checkLink(bool socketError);
    void setOption(int level, int name, const void* value, socklen_t size, const char* what);

    std::string m_component;
    std::string m_ifc;
    FileDescriptor m_socket;
    FileDescriptor m_wakeup;
    MappedRing m_ring;
    std::uint32_t m_blockSize = 0;
    std::uint32_t m_blockCount = 0;
    std::uint32_t m_snapLen = 0;
    int m_timeoutMs = 100;
    LinkType m_link = LinkType::Ethernet;
    bool m_skipOutgoing = false;
    std::uint32_t m_ifindex = 0;

    // Cursor inside the ring (input thread only).
    std::uint32_t m_blockIndex = 0;
    tpacket_block_desc* m_block = nullptr;  ///< ring block in hand, or null
    const tpacket3_hdr* m_packet = nullptr;
    std::uint32_t m_left = 0;  ///< packets of m_block not yet consumed

    /// The first read() after stop(): the drain's deadlines and block budget.
    void beginDrain() noexcept;

    std::atomic<bool> m_stopping{false};
    std::chrono::steady_clock::time_point m_drainDeadline{};
    std::chrono::steady_clock::time_point m_drainLimit{};  ///< the longest a drain waits
    std::uint32_t m_drainBlocks = 0;                       ///< ring blocks the drain may still take
    bool m_draining = false;
    /// The link was seen down (warned once); the interface was deleted when if_nametoindex no
    /// longer gives m_ifindex.
    bool m_linkDown = false;

    std::atomic<std::uint64_t> m_received{0};
    mutable std::mutex m_statsMutex;
    mutable std::uint64_t m_kernelDrops = 0;
};

RawInput::RawInput(const Options& options)
    : m_component(options.component()), m_ifc(options.getString("ifc")) {
    const auto blockSize = options.getInt("block-size");
    const auto blocks = options.getInt("blocks");
    const auto frameSize = options.getInt("frame-size");
    if ((blockSize & (blockSize - 1)) != 0) {
        options.fail("block-size", "must be a power of two in [4096, 268435456], got " +
                                       std::to_string(blockSize));
    }
    if (frameSize % TPACKET_ALIGNMENT != 0 || frameSize > blockSize) {
        options.fail("frame-size", "must be a multiple of " + std::to_string(TPACKET_ALIGNMENT) +
                                       " and at most block-size (" + std::to_string(blockSize) +
                                       "), got " + std::to_string(frameSize));
    }
    if (static_cast<double>(blocks) * static_cast<double>(blockSize) > double(1ULL << 34)) {
        options.fail("blocks", "blocks x block-size must be at most 16 GiB, got " +
                                   std::to_string(blocks) + " x " + std::to_string(blockSize));
    }
    m_blockSize = static_cast<std::uint32_t>(blockSize);
    m_blockCount = static_cast<std::uint32_t>(blocks);
    m_snapLen = static_cast<std::uint32_t>(frameSize) - kFrameOverhead;
    m_timeoutMs = static_cast<int>(options.getDurationNs("timeout") / 1'000'000);
    if (m_timeoutMs < 1) m_timeoutMs = 1;

    const unsigned ifindex = if_nametoindex(m_ifc.c_str());
    if (ifindex == 0) {
        options.fail("ifc", "no network interface '" + m_ifc + "'", interfaceNames());
    }
    m_ifindex = ifindex;

    // Protocol 0: nothing is queued until bind(), after the ring exists.
    m_socket.reset(::socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0));
    if (m_socket.get() < 0) {
        const int err = errno;
        throw RuntimeError(m_component,
                           errnoText("cannot open an AF_PACKET socket (needs CAP_NET_RAW)", err));
    }

    ifreq ifr{};
    std::strncpy(ifr.ifr_name, m_ifc.c_str(), IFNAMSIZ - 1);
    if (::ioctl(m_socket.get(), SIOCGIFHWADDR, &ifr) < 0) {
        const int err = errno;
        throw RuntimeError(m_component,
                           errnoText("cannot read the link type of '" + m_ifc + "'", err));
    }
    switch (ifr.ifr_hwaddr.sa_family) {
        case ARPHRD_ETHER:
        case ARPHRD_LOOPBACK:
            m_link = LinkType::Ethernet;
            break;
        case ARPHRD_NONE:
        case ARPHRD_RAWIP:
            m_link = LinkType::Raw;
            break;  // tun & co: frames start at the IP header
        default:
            options.fail(
                "ifc", "interface '" + m_ifc + "' has link type " +
                           std::to_string(ifr.ifr_hwaddr.sa_family) +
                           " (ARPHRD_*); raw reads Ethernet, loopback and raw-IP (tun) interfaces");
    }

    const int version = TPACKET_V3;
    setOption(SOL_PACKET, PACKET_VERSION, &version, sizeof version, "PACKET_VERSION TPACKET_V3");

    tpacket_req3 req{};
    req.tp_block_size = m_blockSize;
    req.tp_block_nr = m_blockCount;
    req.tp_frame_size = static_cast<unsigned>(frameSize);
    req.tp_frame_nr = (m_blockSize / req.tp_frame_size) * m_blockCount;
    req.tp_retire_blk_tov = static_cast<unsigned>(m_timeoutMs);
    setOption(SOL_PACKET, PACKET_RX_RING, &req, sizeof req, "PACKET_RX_RING");

    const std::size_t ringBytes = std::size_t{m_blockSize} * m_blockCount;
    void* ring = ::mmap(nullptr, ringBytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
                        m_socket.get(), 0);
    if (ring == MAP_FAILED) {
        const int err = errno;
        throw RuntimeError(
            m_component,
            errnoText("cannot mmap the " + std::to_string(ringBytes) + "-byte RX ring", err));
    }
    m_ring.reset(ring, ringBytes);

    // Kernel-side snap length: a BPF program returning N keeps the first N bytes.
    sock_filter snap{BPF_RET | BPF_K, 0, 0, m_snapLen};
    sock_fprog program{1, &snap};
    setOption(SOL_SOCKET, SO_ATTACH_FILTER, &program, sizeof program,
              "SO_ATTACH_FILTER (snap length)");

    if (!options.getFlag("outgoing")) {
        // The socket option keeps outgoing copies out of the ring, but a fanout group delivers
        // through the group's own hook, which does not honour it (seen on Linux 6.18): the
        // check on sll_pkttype stays in any case. Failure (kernel < 4.20) is harmless.
        const int one = 1;
        [[maybe_unused]] const int rc =
            ::setsockopt(m_socket.get(), SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof one);
        m_skipOutgoing = true;
    }

    sockaddr_ll addr{};
    addr.sll_family = AF_PACKET;
    addr.sll_protocol = htons(ETH_P_ALL);
    addr.sll_ifindex = static_cast<int>(ifindex);
    if (::bind(m_socket.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) < 0) {
        const int err = errno;
        throw RuntimeError(m_component, errnoText("cannot bind to interface '" + m_ifc + "'", err));
    }

    if (options.getFlag("promisc")) {
        packet_mreq mreq{};
        mreq.mr_ifindex = static_cast<int>(ifindex);
        mreq.mr_type = PACKET_MR_PROMISC;
        setOption(SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mreq, sizeof mreq, "promiscuous mode");
    }

    if (options.has("fanout")) {
        const int group = static_cast<int>(options.getInt("fanout"));
        const int arg = group | (PACKET_FANOUT_HASH << 16);
        if (::setsockopt(m_socket.get(), SOL_PACKET, PACKET_FANOUT, &arg, sizeof arg) != 0) {
            const int err = errno;
            options.fail("fanout",
                         errnoText("cannot join fanout group " + std::to_string(group) + " on '" +
                                       m_ifc + "' (is the id used with other settings?)",
                                   err));
        }
    }

    m_wakeup.reset(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
    if (m_wakeup.get() < 0) {
        const int err = errno;
        throw RuntimeError(m_component, errnoText("eventfd", err));
    }
}

void RawInput::setOption(int level, int name, const void* value, socklen_t size, const char* what) {
    if (::setsockopt(m_socket.get(), level, name, value, size) != 0) {
        const int err = errno;
        throw RuntimeError(
            m_component, errnoText(std::string("setsockopt ") + what + " on '" + m_ifc + "'", err));
    }
}

void RawInput::stop() noexcept {
    m_stopping.store(true);
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(m_wakeup.get(), &one, sizeof one);
}

bool RawInput::waitForBlock(int timeoutMs, bool watchStop) {
    pollfd fds[2] = {{m_socket.get(), POLLIN | POLLERR, 0}, {m_wakeup.get(), POLLIN, 0}};
    const int n = ::poll(fds, watchStop ? 2 : 1, timeoutMs);
    if (n < 0 && errno != EINTR) {
        const int err = errno;
        throw RuntimeError(m_component, errnoText("poll on '" + m_ifc + "'", err));
    }
    // The kernel reports a link going down as a socket error (ENETDOWN), and keeps reporting
    // it until it is read: read it here, or every poll returns at once (a busy loop).
    if (n > 0 && (fds[0].revents & POLLERR) != 0) {
        checkLink(true);
        return (fds[0].revents & POLLIN) != 0;
    }
    return n > 0 && (fds[0].revents & POLLIN) != 0;
}

void RawInput::checkLink(bool socketError) {
    if (socketError) {
        int err = 0;
        socklen_t len = sizeof err;
        ::getsockopt(m_socket.get(), SOL_SOCKET, SO_ERROR, &err, &len);
    }
    if (if_nametoindex(m_ifc.c_str()) != m_ifindex) {
        throw RuntimeError(m_component, "interface '" + m_ifc + "' disappeared (deleted)");
    }
    ifreq ifr{};
    std::strncpy(ifr.ifr_name, m_ifc.c_str(), IFNAMSIZ - 1);
    if (::ioctl(m_socket.get(), SIOCGIFFLAGS, &ifr) < 0) return;
    const bool up = (ifr.ifr_flags & IFF_UP) != 0;
    if (!up && !m_linkDown) {
        std::fprintf(stderr,
                     "rowprobe: warning: %s: interface '%s' went down; waiting for it to come "
                     "back up\n",
                     m_component.c_str(), m_ifc.c_str());
    } else if (up && m_linkDown) {
        std::fprintf(stderr, "rowprobe: %s: interface '%s' is up again\n", m_component.c_str(),
                     m_ifc.c_str());
    }
    m_linkDown = !up;
}

bool RawInput::drainRingBlock(PacketBlock& block) noexcept {
    while (m_left > 0) {
        if (block.full()) return false;
        const tpacket3_hdr* h = m_packet;
        const auto* ll = reinterpret_cast<const sockaddr_ll*>(
            reinterpret_cast<const std::uint8_t*>(h) + TPACKET_ALIGN(sizeof(tpacket3_hdr)));
        if (!m_skipOutgoing || ll->sll_pkttype != PACKET_OUTGOING) {
            const std::uint8_t* data = reinterpret_cast<const std::uint8_t*>(h) + h->tp_mac;
            const TimeNs ts = TimeNs{h->tp_sec} * kNsPerSec + h->tp_nsec;
            const bool vlan = m_link == LinkType::Ethernet &&
                              (h->tp_status & TP_STATUS_VLAN_VALID) != 0 && h->tp_snaplen >= 12;
            if (!vlan) {
                if (!block.append(data, h->tp_snaplen, h->tp_len, ts)) return false;
            } else {
                // Put back the 802.1Q tag the kernel took out: MACs, TPID, TCI, the rest.
                const std::uint32_t len = h->tp_snaplen + 4;
                if (block.arenaUsed + len > PacketBlock::kArenaBytes) return false;
                std::uint8_t* out = block.arena.data() + block.arenaUsed;
                const std::uint16_t tpid = (h->tp_status & TP_STATUS_VLAN_TPID_VALID) != 0
                                               ? h->hv1.tp_vlan_tpid
                                               : ETH_P_8021Q;
                const std::uint16_t tci = static_cast<std::uint16_t>(h->hv1.tp_vlan_tci);
                std::memcpy(out, data, 12);
                out[12] = static_cast<std::uint8_t>(tpid >> 8);
                out[13] = static_cast<std::uint8_t>(tpid);
                out[14] = static_cast<std::uint8_t>(tci >> 8);
                out[15] = static_cast<std::uint8_t>(tci);
                std::memcpy(out + 16, data + 12, h->tp_snaplen - 12);
                block.packets[block.count++] = RawPacket{out, len, h->tp_len + 4, ts};
                block.arenaUsed += (len + 63) & ~std::uint32_t{63};
            }
        }
        --m_left;
        m_packet = reinterpret_cast<const tpacket3_hdr*>(reinterpret_cast<const std::uint8_t*>(h) +
                                                         h->tp_next_offset);
    }
    releaseRingBlock();
    return true;
}

void RawInput::releaseRingBlock() noexcept {
    // The kernel reads block_status without a lock: publish it after our last access.
    __atomic_store_n(&m_block->hdr.bh1.block_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
    m_block = nullptr;
    m_blockIndex = m_blockIndex + 1 == m_blockCount ? 0 : m_blockIndex + 1;
}

void RawInput::beginDrain() noexcept {
    m_draining = true;
    const auto now = std::chrono::steady_clock::now();
    m_drainDeadline = now + std::chrono::milliseconds(std::min(m_timeoutMs, 250) + 50);
    // Waiting on only helps when the retire timer was due within the first wait.
    m_drainLimit = m_timeoutMs <= 250 ? now + kDrainLimit : m_drainDeadline;
    m_drainBlocks = m_blockCount + 1;  // every block the ring held, and the one being filled
}

InputPlugin::Status RawInput::read(PacketBlock& block) {
    block.link = m_link;
    if (!m_draining && m_stopping.load(std::memory_order_relaxed)) beginDrain();
    for (;;) {
        if (m_block == nullptr) {
            if (m_draining && m_drainBlocks == 0) break;  // what the ring held is handed over
            tpacket_block_desc* desc = blockAt(m_blockIndex);
            if ((__atomic_load_n(&desc->hdr.bh1.block_status, __ATOMIC_ACQUIRE) & TP_STATUS_USER) ==
                0) {
                if (block.count > 0) break;
                if (!m_draining && m_stopping.load(std::memory_order_relaxed)) beginDrain();
                if (m_draining) {
                    // Wait for the block the kernel is filling: past the first wait, only
                    // while it holds packets (a peek at a count only the kernel writes; the
                    // block stays the kernel's).
                    const auto now = std::chrono::steady_clock::now();
                    if (now >= m_drainDeadline) {
                        const bool pending =
                            __atomic_load_n(&desc->hdr.bh1.num_pkts, __ATOMIC_ACQUIRE) != 0;
                        if (!pending || now >= m_drainLimit) break;
                        m_drainDeadline =
                            std::min(now + std::chrono::milliseconds(20), m_drainLimit);
                    }
                    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                        m_drainDeadline - now);
                    waitForBlock(static_cast<int>(left.count()) + 1, false);
                    continue;
                }
                if (!waitForBlock(m_timeoutMs, true)) {
                    if (m_stopping.load(std::memory_order_relaxed)) continue;
                    checkLink(false);  // an idle link may be down, or gone
                    return Status::Timeout;
                }
                continue;
            }
            m_block = desc;
            m_left = desc->hdr.bh1.num_pkts;
            m_packet = reinterpret_cast<const tpacket3_hdr*>(
                reinterpret_cast<const std::uint8_t*>(desc) + desc->hdr.bh1.offset_to_first_pkt);
            if (m_draining) --m_drainBlocks;
        }
        if (!drainRingBlock(block)) break;  // the PacketBlock is full
    }
    m_received.fetch_add(block.count, std::memory_order_relaxed);
    // Empty only when a drain is over: every later read() ends at once (the budget is spent,
    // or the block being filled stays empty or past the limit).
    if (block.count == 0) {
        m_drainBlocks = 0;
        return Status::End;
    }
    return Status::Ok;
}

InputStats RawInput::stats() const {
    const std::lock_guard lock(m_statsMutex);
    tpacket_stats_v3 st{};
    socklen_t len = sizeof st;
    if (::getsockopt(m_socket.get(), SOL_PACKET, PACKET_STATISTICS, &st, &len) == 0) {
        m_kernelDrops += st.tp_drops;  // the kernel resets its counters on every read
    }
    InputStats s;
    s.received = m_received.load(std::memory_order_relaxed);
    s.kernelDrops = m_kernelDrops;
    return s;
}

ROWPROBE_REGISTER_PLUGIN(
    PluginKind::Input, RawInput,
    {.name = "raw",
     .summary = "AF_PACKET TPACKET_V3 ring on a live interface, fanout for queues",
     .options = kOptions});

}  // namespace rowprobe::input
