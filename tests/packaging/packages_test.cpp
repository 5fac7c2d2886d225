// The packages, built and checked the way an operator uses them (docs/operations.md):
// * Deb: a build of its own (BUILD-pkg-deb, configured for /usr) -> `cpack -G DEB`; the .deb's
//   metadata (shlibdeps, conffiles, maintainer scripts); `dpkg -i` on this machine; the
//   installed binary's -V; the unit's own ExecStart command line (with %i expanded) running a
//   capture whose row policy comes from the installed plugin directory; the same command line
//   stopped by SIGTERM in the middle of a live input exports every flow; `systemd-analyze
//   verify` of the installed unit; `dpkg --purge` leaves no file or user behind. Needs root
//   and dpkg (CI runs as root on a throw-away machine); skipped otherwise, and it purges what
//   it installed even when a check fails.
// * Rpm: the configured spec -> `rpmbuild -bs` (source RPM) and `rpmbuild -bb --nodeps` into a
//   scratch _topdir; the binary RPMs' file list (`rpm -qlp`) equals the install manifest of
//   the rpm build; rpmlint finds nothing the spec does not explain.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "../e2e/live_capture.hpp"
#include "test_support.hpp"

namespace rowprobe::test {
namespace {

namespace fs = std::filesystem;

bool have(const std::string& tool) {
    return runShell("command -v '" + tool + "' >/dev/null").exitCode == 0;
}

std::string quote(const std::string& s) {
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

/// ccache shares results between trees when paths are relative to a common base (as
/// scripts/test.sh sets it); set the same base when the caller did not.
std::string ccacheEnv() {
    if (std::getenv("CCACHE_BASEDIR") != nullptr) return "";
    return "CCACHE_BASEDIR=" + quote(sourceDir().parent_path().string()) +
           " CCACHE_NOHASHDIR=true ";
}

/// A sibling of this build directory (same depth below the source tree).
fs::path siblingBuildDir(const std::string& suffix) {
    const fs::path build = fs::path(ROWPROBE_BUILD_DIR);
    return build.parent_path() / (build.filename().string() + suffix);
}

std::set<std::string> lines(const std::string& text) {
    std::set<std::string> out;
    std::istringstream in(text);
    std::string l;
    while (std::getline(in, l)) {
        if (!l.empty()) out.insert(l);
    }
    return out;
}

std::string listDiff(const std::set<std::string>& a, const std::set<std::string>& b) {
    std::string out;
    for (const auto& x : a) {
        if (!b.count(x)) out += "  - " + x + "\n";
    }
    for (const auto& x : b) {
        if (!a.count(x)) out += "  + " + x + "\n";
    }
    return out;
}

// ---- .deb -------------------------------------------------------------------------------------

/// Every path on the system that names rowprobe, outside the source and build trees. The tests
/// that run beside this one name what they create in those trees otherwise (network namespaces
/// `rpnic-*`, DPDK runtime directories `rptest-*`), so that only the package's paths count.
std::set<std::string> rowprobePaths() {
    return lines(runShell("find /etc /usr /lib /var /opt /srv /run -xdev -path '*rowprobe*' "
                          "2>/dev/null | grep -v '^/work/' | sort",
                          120)
                     .out);
}

/// Purges the package (and the test's instance configuration) when the test ends, whatever
/// happened.
struct PurgeGuard {
    fs::path instanceConf;
    ~PurgeGuard() {
        std::error_code ec;
        fs::remove(instanceConf, ec);
        runShell("dpkg --purge rowprobe >/dev/null 2>&1", 120);
    }
};

/// The machine's package database is one for every test suite running on it: two suites (two
/// clones, as scripts/soak-ci.sh runs them) installing and purging the same package at once
/// collide on dpkg's lock, or one purges what the other is checking. Held for the whole test.
struct SystemPackageLock {
    int fd = ::open("/tmp/rowprobe-packages-test.lock", O_CREAT | O_RDWR | O_CLOEXEC, 0600);
    SystemPackageLock() {
        if (fd >= 0) ::flock(fd, LOCK_EX);
    }
    ~SystemPackageLock() {
        if (fd >= 0) ::close(fd);
    }
    SystemPackageLock(const SystemPackageLock&) = delete;
    SystemPackageLock& operator=(const SystemPackageLock&) = delete;
};

TEST(Packages, DebBuildsInstallsRunsAndPurgesCleanly) {
    if (std::string(ROWPROBE_SANITIZED) != "") GTEST_SKIP() << "sanitizer build: packages skipped";
    if (geteuid() != 0) GTEST_SKIP() << "needs root to install the .deb";
    for (const char* tool : {"dpkg", "dpkg-deb", "cpack", "dpkg-shlibdeps"}) {
        if (!have(tool)) GTEST_SKIP() << tool << " not installed";
    }
    const SystemPackageLock packageLock;
    if (runShell("dpkg-query -W -f='${Status}' rowprobe 2>/dev/null | grep -q installed")
            .exitCode == 0)
        GTEST_SKIP() << "a rowprobe package is already installed on this machine; not touching it";

    // Build: configure from the source tree into a fresh directory, then CPack.
    const fs::path build = siblingBuildDir("-pkg-deb");
    fs::remove_all(build);
    const CommandResult configured =
        runShell(ccacheEnv() + "cmake -S " + quote(sourceDir().string()) + " -B " +
                     quote(build.string()) + " " + ROWPROBE_PKG_CMAKE_ARGS +
                     " -DCMAKE_INSTALL_PREFIX=/usr -DROWPROBE_BUILD_TESTS=OFF 2>&1",
                 300);
    ASSERT_EQ(configured.exitCode, 0) << configured.out;
    const CommandResult built =
        runShell(ccacheEnv() + "cmake --build " + quote(build.string()) + " 2>&1 | tail -20", 900);
    ASSERT_EQ(built.exitCode, 0) << built.out;
    const CommandResult packed =
        runShell("cd " + quote(build.string()) + " && cpack -G DEB 2>&1", 600);
    ASSERT_EQ(packed.exitCode, 0) << packed.out;
    const std::string arch = runShell("dpkg --print-architecture").out;
    const fs::path deb = build / ("rowprobe_" + std::string(ROWPROBE_VERSION_STRING) + "_" +
                                  arch.substr(0, arch.find('\n')) + ".deb");
    ASSERT_TRUE(fs::exists(deb)) << packed.out;

    // Metadata: dependencies from shlibdeps, the conffiles, the maintainer scripts.
    const CommandResult info = runCommand({"dpkg-deb", "-I", deb.string()});
    EXPECT_NE(info.out.find("libpcap0.8"), std::string::npos) << info.out;
    EXPECT_NE(info.out.find("libc6"), std::string::npos) << info.out;
    EXPECT_NE(info.out.find("adduser"), std::string::npos) << info.out;
    for (const char* part : {"postinst", "prerm", "postrm", "conffiles"})
        EXPECT_NE(info.out.find(part), std::string::npos) << part << "\n" << info.out;
    EXPECT_EQ(runCommand({"dpkg-deb", "-f", deb.string(), "Section"}).out, "net\n");
    EXPECT_EQ(lines(runCommand({"dpkg-deb", "-I", deb.string(), "conffiles"}).out),
              (std::set<std::string>{"/etc/logrotate.d/rowprobe", "/etc/rowprobe/example.conf"}));

    const std::set<std::string> before = rowprobePaths();
    const bool userBefore = runShell("getent passwd rowprobe >/dev/null").exitCode == 0;
    PurgeGuard guard{"/etc/rowprobe/rowprobe-pkgtest.conf"};
    const CommandResult installed = runCommand({"dpkg", "-i", deb.string()}, 300);
    ASSERT_EQ(installed.exitCode, 0) << installed.out << installed.err;

    // What the package put in place.
    for (const char* file :
         {"/usr/bin/rowprobe", "/etc/rowprobe/example.conf",
          "/lib/systemd/system/rowprobe@.service", "/lib/systemd/system/rowprobe.target",
          "/usr/share/man/man8/rowprobe.8", "/usr/share/man/man5/rowprobe.conf.5",
          "/usr/include/rowprobe/plugin.hpp", "/etc/logrotate.d/rowprobe"}) {
        EXPECT_TRUE(fs::exists(file)) << file;
    }
    const std::string pluginDir = runShell("ls -d /usr/lib/*/rowprobe | head -1").out;
    EXPECT_NE(pluginDir.find("/usr/lib/"), std::string::npos) << "no /usr/lib/<multiarch>/rowprobe";
    EXPECT_EQ(runShell("getent passwd rowprobe | cut -d: -f7").out, "/usr/sbin/nologin\n");
    const CommandResult version = runCommand({"/usr/bin/rowprobe", "-V"});
    EXPECT_EQ(version.exitCode, 0);
    EXPECT_EQ(version.out.rfind("rowprobe " + std::string(ROWPROBE_VERSION_STRING), 0), 0U)
        << version.out;

    // The unit: systemd-analyze verify is clean for an instance. (--man=no: its check of
    // Documentation= runs man(1), whose cat page cache would outlive the purge; the pages are
    // looked up with man -w below instead.)
    if (have("systemd-analyze")) {
        const CommandResult verify = runShell(
            "cd /lib/systemd/system && systemd-analyze verify --man=no rowprobe@pkgtest.service "
            "2>&1");
        EXPECT_EQ(verify.exitCode, 0) << verify.out;
        EXPECT_EQ(verify.out, "") << "systemd-analyze verify rowprobe@pkgtest.service";
    }

    // The unit's ExecStart, %i = rowprobe-pkgtest, on a capture; the row policy `fifo` is not
    // built in: it comes from the installed plugin directory.
    const std::string unit = readFile("/lib/systemd/system/rowprobe@.service");
    std::smatch m;
    ASSERT_TRUE(std::regex_search(unit, m, std::regex("\nExecStart=([^\n]+)\n")));
    std::vector<std::string> execStart;
    {
        std::istringstream words(
            std::regex_replace(std::string(m[1]), std::regex("%i"), "rowprobe-pkgtest"));
        std::string w;
        while (words >> w) execStart.push_back(w);
    }
    ASSERT_EQ(execStart.at(0), "/usr/bin/rowprobe");
    EXPECT_EQ(execStart.back(), "/etc/rowprobe/rowprobe-pkgtest.conf");
    const fs::path dir = tempDir();
    const fs::path flows = dir / "flows.json";
    std::ofstream(guard.instanceConf)
        << "# rowprobe package test\ninput = pcap;file="
        << (sourceDir() / "pcaps" / "demo.pcap").string()
        << "\nstorage = cache;policy=fifo\noutput = json;file=" << flows.string()
        << "\nquiet = true\n";
    const CommandResult ran = runCommand(execStart, 120);
    EXPECT_EQ(ran.exitCode, 0) << ran.err;
    EXPECT_EQ(parseJsonLines(readFile(flows)).size(), 309U) << ran.err;  // pcaps/README.md

    // SIGTERM in the middle of a live input (the FIFO stays open): rowprobe stops reading and
    // exports every flow it has, before exit: all of them in the output, every parsed packet
    // in a flow.
    CaptureFifo fifo(dir / "capture.fifo");
    ASSERT_TRUE(fifo.ok());
    const fs::path stopStats = dir / "stop-stats.json";
    std::ofstream(guard.instanceConf, std::ios::trunc)
        << "input = pcap;file=" << fifo.path().string() << "\noutput = json;file=" << flows.string()
        << "\npid-file = " << (dir / "pid").string() << "\nstats-json = " << stopStats.string()
        << "\nquiet = true\n";
    {
        ChildProcess service(execStart);
        fifo.writeHeader();
        fifo.writeFlows(1700000000, 500, 1000);
        ASSERT_TRUE(waitFor([&] { return fs::exists(dir / "pid"); }, 20));
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        service.signal(SIGTERM);
        const CommandResult stopped = service.wait(30);
        EXPECT_EQ(stopped.exitCode, 0) << stopped.err;
        const auto records = parseJsonLines(readFile(flows));
        const JsonObject stats = parseJsonFlat(readFile(stopStats));
        ASSERT_FALSE(stats.empty()) << "no statistics after SIGTERM";
        EXPECT_GT(records.size(), 0U);
        EXPECT_EQ(std::to_string(records.size()), stats.at("total.cache.flows_created"))
            << "SIGTERM must export every cached flow";
        EXPECT_EQ(std::to_string(records.size()), stats.at("output.records"));
        std::uint64_t packets = 0;
        for (const auto& r : records)
            packets += std::stoull(r.at("packets")) + std::stoull(r.at("packets_rev"));
        EXPECT_EQ(std::to_string(packets), stats.at("total.parsed"));
    }
    fs::remove(guard.instanceConf);

    if (have("man")) {
        // man -w finds the installed pages in the man path; -l formats them (without leaving
        // cat pages behind in /var/cache/man, as a lookup by name would as root).
        EXPECT_EQ(runShell("man -w 8 rowprobe").out, "/usr/share/man/man8/rowprobe.8\n");
        EXPECT_EQ(runShell("man -w 5 rowprobe.conf").out, "/usr/share/man/man5/rowprobe.conf.5\n");
        const CommandResult man =
            runShell("MANWIDTH=80 man -P cat -l /usr/share/man/man8/rowprobe.8 2>&1");
        EXPECT_NE(man.out.find("ROWPROBE(8)"), std::string::npos) << man.out.substr(0, 300);
    }

    // Purge: no file and no user left behind.
    const CommandResult purged = runCommand({"dpkg", "--purge", "rowprobe"}, 300);
    EXPECT_EQ(purged.exitCode, 0) << purged.out << purged.err;
    EXPECT_EQ(runShell("getent passwd rowprobe >/dev/null").exitCode == 0, userBefore)
        << "the rowprobe user outlived the purge";
    EXPECT_EQ(runShell("getent group rowprobe >/dev/null").exitCode == 0, userBefore);
    const std::set<std::string> after = rowprobePaths();
    EXPECT_EQ(after, before) << "files left behind by the purge:\n" << listDiff(before, after);
}

// ---- RPM --------------------------------------------------------------------------------------

TEST(Packages, RpmSpecBuildsSourceAndBinaryRpmsMatchingTheInstallManifest) {
    if (std::string(ROWPROBE_SANITIZED) != "") GTEST_SKIP() << "sanitizer build: packages skipped";
    for (const char* tool : {"rpmbuild", "rpm", "tar"}) {
        if (!have(tool)) GTEST_SKIP() << tool << " not installed (Debian package rpm)";
    }
    const fs::path spec = fs::path(ROWPROBE_BUILD_DIR) / "packaging" / "rowprobe.spec";
    ASSERT_TRUE(fs::exists(spec)) << "CMake did not configure " << spec;
    const std::string version = ROWPROBE_VERSION_STRING;
    const std::string nv = "rowprobe-" + version;

    // The scratch _topdir lies a level below a sibling of this build, so that its build
    // directory BUILD/rowprobe-V/build/rpm sits as deep below its sources as this build does.
    const fs::path top = siblingBuildDir("-pkg-rpm");
    fs::remove_all(top / "RPMS");
    fs::remove_all(top / "SRPMS");
    fs::create_directories(top / "SOURCES");
    const CommandResult tarred = runShell(
        "tar -czf " + quote((top / "SOURCES" / (nv + ".tar.gz")).string()) + " -C " +
            quote(sourceDir().string()) + " --exclude=./build --exclude='./build*' --exclude-vcs " +
            "--transform " + quote("s,^\\./," + nv + "/,") + " . 2>&1",
        300);
    ASSERT_EQ(tarred.exitCode, 0) << tarred.out;

    // The conditional builds: --with dpdk / --with ndpi add their build dependencies and turn
    // the CMake options on.
    if (have("rpmspec")) {
        const std::string plain =
            runShell("rpmspec -q --buildrequires " + quote(spec.string())).out;
        const std::string with =
            runShell("rpmspec -q --buildrequires --with dpdk --with ndpi " + quote(spec.string()))
                .out;
        EXPECT_EQ(plain.find("dpdk-devel"), std::string::npos) << plain;
        EXPECT_NE(with.find("dpdk-devel"), std::string::npos) << with;
        EXPECT_NE(with.find("libndpi-devel"), std::string::npos) << with;
        EXPECT_NE(runShell("rpmspec -P --with dpdk " + quote(spec.string()) + " 2>&1")
                      .out.find("-DROWPROBE_WITH_DPDK=ON"),
                  std::string::npos);
        EXPECT_NE(runShell("rpmspec -P " + quote(spec.string()) + " 2>&1")
                      .out.find("-DROWPROBE_WITH_DPDK=OFF"),
                  std::string::npos);
    }

    const std::string defines =
        "--define " + quote("_topdir " + top.string()) + " --define " +
        quote("rowprobe_cmake_args " + std::string(ROWPROBE_PKG_CMAKE_ARGS));
    const CommandResult srpm =
        runShell("rpmbuild -bs " + defines + " " + quote(spec.string()) + " 2>&1", 300);
    ASSERT_EQ(srpm.exitCode, 0) << srpm.out;
    EXPECT_NE(runShell("ls " + quote((top / "SRPMS").string()) + "/" + nv + "-*.src.rpm").exitCode,
              1);
    const CommandResult srpmFiles = runShell("rpm -qlp " + quote((top / "SRPMS").string()) + "/" +
                                             nv + "-*.src.rpm 2>/dev/null");
    EXPECT_EQ(lines(srpmFiles.out), (std::set<std::string>{nv + ".tar.gz", "rowprobe.spec"}));

    const CommandResult rpms = runShell(ccacheEnv() + "rpmbuild -bb --nodeps --noclean " + defines +
                                            " " + quote(spec.string()) + " 2>&1 | tail -30",
                                        900);
    ASSERT_EQ(rpms.exitCode, 0) << rpms.out;
    std::set<std::string> packaged;
    std::size_t packages = 0;
    for (const auto& e : fs::recursive_directory_iterator(top / "RPMS")) {
        if (e.path().extension() != ".rpm") continue;
        ++packages;
        // Files only (rpm lists the directories a package owns too).
        const CommandResult list = runShell("rpm -qp --qf '[%{FILEMODES:perms} %{FILENAMES}\\n]' " +
                                            quote(e.path().string()) + " 2>/dev/null");
        for (const auto& l : lines(list.out)) {
            if (l[0] != 'd') packaged.insert(l.substr(l.find(' ') + 1));
        }
    }
    EXPECT_EQ(packages, 2U) << "rowprobe and rowprobe-devel";
    // The manifest of `cmake --install` in %install, with the buildroot stripped.
    const fs::path manifestFile = top / "BUILD" / nv / "build" / "rpm" / "install_manifest.txt";
    ASSERT_TRUE(fs::exists(manifestFile));
    std::set<std::string> manifest;
    for (const auto& path : lines(readFile(manifestFile))) {
        const std::size_t usr = path.find("/BUILDROOT/");
        const std::size_t rel = usr == std::string::npos ? 0 : path.find('/', usr + 11);
        manifest.insert(rel == std::string::npos ? path : path.substr(rel));
    }
    // rpm compresses man pages (brp-compress): rowprobe.8 -> rowprobe.8.gz.
    std::set<std::string> packagedPlain;
    for (const auto& f : packaged) {
        packagedPlain.insert(f.ends_with(".gz") && f.find("/man/") != std::string::npos
                                 ? f.substr(0, f.size() - 3)
                                 : f);
    }
    // %doc files come from the source tree, not the install; /usr/lib/.build-id/ holds the
    // links rpm adds for every ELF file.
    std::erase_if(packagedPlain, [](const std::string& f) {
        return f.find("/doc/") != std::string::npos || f.rfind("/usr/lib/.build-id/", 0) == 0;
    });
    EXPECT_GE(manifest.size(), 40U);
    EXPECT_EQ(packagedPlain, manifest) << "rpm -qlp vs install_manifest.txt:\n"
                                       << listDiff(manifest, packagedPlain);

    // rpmlint: every message is one the spec explains in its header comment.
    if (have("rpmlint")) {
        const CommandResult lint = runShell("rpmlint " + quote(spec.string()) + " 2>&1");
        const std::string specText = readFile(spec);
        std::istringstream in(lint.out);
        std::string l;
        static const std::regex message(R"(: [WE]: ([a-z0-9-]+))");
        while (std::getline(in, l)) {
            std::smatch mm;
            if (!std::regex_search(l, mm, message)) continue;
            EXPECT_NE(specText.find("# * " + std::string(mm[1])), std::string::npos)
                << "rpmlint message the spec does not explain: " << l;
        }
    }
}

}  // namespace
}  // namespace rowprobe::test
