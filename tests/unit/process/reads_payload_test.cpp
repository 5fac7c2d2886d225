// ProcessHooks::readsPayload: a plugin that declares `kReadsPayload = false` lets the flow
// table skip fetching the payload of every packet, so the declaration must be true to its
// hooks. Every registered plugin that makes it is driven through TCP and UDP flows in both
// directions whose payload bytes lie on an inaccessible page (the headers end at the page
// boundary): a hook that reads one byte of payload kills the child process of the death test.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "flow_driver.hpp"
#include "process/classify/classify_model.hpp"
#include "rowprobe/registry.hpp"
#include "test_support.hpp"

namespace rowprobe::test {
namespace {

/// Two pages: the first readable, the second PROT_NONE. `place` copies a frame's headers so
/// that its payload starts exactly at the second page.
class GuardedFrame {
public:
    GuardedFrame() {
        m_page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
        void* p =
            ::mmap(nullptr, 2 * m_page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) return;
        m_base = static_cast<std::uint8_t*>(p);
        if (::mprotect(m_base + m_page, m_page, PROT_NONE) != 0) {
            ::munmap(m_base, 2 * m_page);
            m_base = nullptr;
        }
    }
    ~GuardedFrame() {
        if (m_base != nullptr) ::munmap(m_base, 2 * m_page);
    }
    GuardedFrame(const GuardedFrame&) = delete;
    GuardedFrame& operator=(const GuardedFrame&) = delete;
    bool ok() const { return m_base != nullptr; }

    /// `f` parsed from an accessible copy, then pointed at the guarded one: every offset and
    /// length as the parser set them, the payload's bytes unreadable.
    ParsedPacket place(const Bytes& f, TimeNs ts) const {
        ParsedPacket pp;
        AnomalyCounters anomalies;
        const RawPacket raw{f.data(), static_cast<std::uint32_t>(f.size()),
                            static_cast<std::uint32_t>(f.size()), ts};
        EXPECT_TRUE(parsePacket(raw, LinkType::Ethernet, ParserConfig{}, pp, anomalies));
        EXPECT_FALSE(pp.payload().empty());
        const std::size_t start = pp.payload().data() - f.data();
        std::uint8_t* at = m_base + m_page - start;
        std::memcpy(at, f.data(), start);
        pp.frame = at;
        return pp;
    }

private:
    std::size_t m_page = 0;
    std::uint8_t* m_base = nullptr;
};

/// A plugin string that starts each plugin declaring kReadsPayload = false (the options a
/// plugin cannot start without: classify's model).
std::string pluginString(const std::string& name) {
    if (name != "classify") return name;
    classify::ModelSpec s;
    s.kind = classify::ModelKind::Tree;
    s.packets = 2;
    s.minPackets = 1;
    s.classes = {"a", "b"};
    s.depth = 1;
    s.nodeFeature = {0};
    s.nodeThreshold = {100};
    s.leafClass = {0, 1};
    s.leafScore = {0.9F, 0.8F};
    const auto bytes = classify::encodeModel(s);
    const auto path = tempDir() / "reads_payload.rpcm";
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
    return "classify;model=" + path.string();
}

/// A TCP flow and a UDP flow, each with packets both ways (payload 1 and 400 bytes), through
/// the plugin, then its write hook; exits 0 unless a hook touched the payload.
[[noreturn]] void driveGuarded(const std::string& plugin) {
    const GuardedFrame guard;
    if (!guard.ok()) std::_Exit(3);
    for (const std::uint8_t proto : {std::uint8_t{6}, std::uint8_t{17}}) {
        FlowDriver d(plugin);
        TimeNs ts = 1'700'000'000'000'000'000;
        for (int i = 0; i < 12; ++i) {
            const Bytes payload(i % 3 == 0 ? 1 : 400, 'x');
            const Bytes f = i % 2 == 0 ? frame(proto, kClient, 40000, kServer, 443, payload)
                                       : frame(proto, kServer, 443, kClient, 40000, payload);
            d.parsed(guard.place(f, ts += 1'000'000));
        }
        d.write();
    }
    std::_Exit(0);
}

TEST(ReadsPayload, PluginsThatDeclareNoPayloadNeverReadIt) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    std::size_t checked = 0;
    for (const std::string& name : Registry::instance().names(PluginKind::Process)) {
        const std::string plugin = pluginString(name);
        std::unique_ptr<Plugin> p;
        try {
            p = Registry::instance().create(PluginKind::Process, plugin, "-p");
        } catch (const std::exception& e) {
            ADD_FAILURE() << name << " does not start with " << plugin << ": " << e.what();
            continue;
        }
        if (static_cast<ProcessPlugin*>(p.get())->hooks().readsPayload) continue;
        EXPECT_EXIT(driveGuarded(plugin), ::testing::ExitedWithCode(0), "")
            << name << " declares kReadsPayload = false but its hooks read the payload";
        ++checked;
    }
    // flowstats, pstats, bstats, phists, basicplus, classify, conn, communityid, flowhash, vlan.
    EXPECT_GE(checked, 10U);
}

// The check itself: a hook that reads the payload does not get through the guarded drive
// (SIGSEGV; under ASan its report and exit code 1).
TEST(ReadsPayload, TheGuardCatchesAPluginThatReadsThePayload) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    const auto notClean = [](int status) {
        return !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    };
    EXPECT_EXIT(driveGuarded("http"), notClean, "");
}

}  // namespace
}  // namespace rowprobe::test
