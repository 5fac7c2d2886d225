// A stop request (SIGINT, SIGTERM) must not lose packets an input captured before it. An input
// that holds such packets (the raw input's ring: retired blocks and the block the kernel is
// filling) hands them over from read() after stop() and then returns End, so the pipeline has
// to read it until End. Here a scripted input does just that, in process: packets of one flow
// while running, and after stop() a backlog of another flow's packets spread over several reads.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "cli.hpp"
#include "pipeline.hpp"
#include "rowprobe/options.hpp"
#include "rowprobe/plugin.hpp"
#include "rowprobe/registry.hpp"
#include "test_support.hpp"

namespace rowprobe {
namespace {

using namespace std::chrono_literals;

constexpr std::uint16_t kLivePort = 1111;
constexpr std::uint16_t kBacklogPort = 2222;
constexpr int kBacklogReads = 5;
constexpr int kBacklogPerRead = 3;
constexpr std::uint32_t kFrameBytes = 60;

/// Ethernet + IPv4 + UDP, 60 bytes, from 10.0.0.1:port to 10.0.0.2:53.
std::array<std::uint8_t, 60> frame(std::uint16_t port) {
    std::array<std::uint8_t, 60> f{};
    f[12] = 0x08;  // IPv4
    std::uint8_t* ip = f.data() + 14;
    ip[0] = 0x45;
    ip[3] = 46;  // total length: 20 IP + 8 UDP + 18 payload
    ip[8] = 64;
    ip[9] = 17;
    ip[12] = 10, ip[15] = 1;
    ip[16] = 10, ip[19] = 2;
    std::uint8_t* udp = ip + 20;
    udp[0] = static_cast<std::uint8_t>(port >> 8);
    udp[1] = static_cast<std::uint8_t>(port);
    udp[3] = 53;
    udp[5] = 26;
    return f;
}

/// A live input that captures a packet of the live flow every millisecond until stop(), then
/// hands over its backlog: kBacklogReads reads of kBacklogPerRead packets, then End.
class BacklogInput final : public InputPlugin {
public:
    explicit BacklogInput(const Options& /*options*/)
        : m_live(frame(kLivePort)), m_backlog(frame(kBacklogPort)) {}

    Status read(PacketBlock& block) override {
        block.link = LinkType::Ethernet;
        const TimeNs now =
            static_cast<TimeNs>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                    std::chrono::system_clock::now().time_since_epoch())
                                    .count());
        if (!m_stopped.load()) {
            std::this_thread::sleep_for(1ms);
            block.append(m_live.data(), kFrameBytes, kFrameBytes, now);
            return Status::Ok;  // even when stop() came during the sleep: captured before it
        }
        if (m_backlogReads == kBacklogReads) return Status::End;
        ++m_backlogReads;
        for (int i = 0; i < kBacklogPerRead; ++i)
            block.append(m_backlog.data(), kFrameBytes, kFrameBytes, now);
        return Status::Ok;
    }
    void stop() noexcept override { m_stopped.store(true); }
    bool live() const noexcept override { return true; }

private:
    std::array<std::uint8_t, 60> m_live;
    std::array<std::uint8_t, 60> m_backlog;
    std::atomic<bool> m_stopped{false};
    int m_backlogReads = 0;
};

ROWPROBE_REGISTER_PLUGIN(PluginKind::Input, BacklogInput,
                         {.name = "test-backlog",
                          .summary = "test input: a backlog handed over after stop()"});

TEST(StopDrain, PacketsAnInputHandsOverAfterStopAreExported) {
    const auto dir = test::tempDir();
    core::Config config;
    config.inputs = {"test-backlog"};
    config.output = "json;file=" + (dir / "flows.json").string();
    config.quiet = true;
    core::Pipeline pipeline(config);
    std::atomic<bool> stop{false};
    std::thread signal([&] {
        std::this_thread::sleep_for(100ms);
        stop = true;
    });
    const int rc = pipeline.run(stop);
    signal.join();
    ASSERT_EQ(rc, 0) << pipeline.error();
    std::uint64_t live = 0, backlog = 0;
    for (const auto& f : test::parseJsonLines(test::readFile(dir / "flows.json"))) {
        const std::uint64_t packets = std::stoull(f.at("packets"));
        if (f.at("src_port") == std::to_string(kLivePort)) live += packets;
        if (f.at("src_port") == std::to_string(kBacklogPort)) backlog += packets;
    }
    EXPECT_GT(live, 0u);
    EXPECT_EQ(backlog, std::uint64_t{kBacklogReads * kBacklogPerRead})
        << "every packet the input returned after stop(), until End, is exported";
}

}  // namespace
}  // namespace rowprobe
