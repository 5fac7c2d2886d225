// rowprobe: command-line entry point. Exit codes (docs/reliability.md, "Exit codes"):
//   0  success: every record taken from the flow caches was delivered;
//   1  failure after start-up: an I/O error, records dropped by the output (collector down,
//      disk full, ...), memory or threads exhausted;
//   2  the configuration was refused at start-up (bad option or plugin string, a file named in
//      it that cannot be opened or created), printed as one message.
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <thread>

#include "cli.hpp"
#include "failure.hpp"
#include "metrics.hpp"
#include "pipeline.hpp"
#include "rowprobe/errors.hpp"

namespace {

std::atomic<bool> g_stop{false};
std::atomic<bool> g_reopen{false};  ///< SIGHUP: the export thread reopens the file outputs

extern "C" void onHangup(int /*signal*/) { g_reopen.store(true); }

extern "C" void onSignal(int /*signal*/) {
    if (g_stop.exchange(true)) {
        std::_Exit(130);  // a second signal: the user insists
    }
}

void installSignals() {
    struct sigaction sa {};
    sa.sa_handler = onSignal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    struct sigaction hup {};
    hup.sa_handler = onHangup;
    sigemptyset(&hup.sa_mask);
    hup.sa_flags = SA_RESTART;
    sigaction(SIGHUP, &hup, nullptr);
    std::signal(SIGPIPE, SIG_IGN);
}

int configError(const rowprobe::ConfigError& e) {
    std::cerr << "rowprobe: error: " << e.render() << '\n';
    return 2;
}

rowprobe::ConfigError fileError(const std::string& option, const std::string& path,
                                const std::string& problem) {
    return rowprobe::ConfigError({.component = "command line",
                                  .option = option,
                                  .value = path,
                                  .problem = problem,
                                  .help = "rowprobe -h"});
}

/// Opens (creates, truncates) a file named by an option at start-up, so that a path that
/// cannot be written stops start-up (exit 2) rather than fail after the run.
void openAtStart(std::ofstream& out, const std::string& option, const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
        throw fileError(option, path, "'" + path + "' is a directory, expected a file");
    out.open(path, std::ios::out | std::ios::trunc);
    if (!out) {
        throw fileError(option, path,
                        "cannot create '" + path + "': " + std::strerror(errno ? errno : EIO));
    }
}

/// Checks at start-up that `path` can be created or overwritten, without touching it.
void checkCreatable(const std::string& option, const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0) {
        if (S_ISDIR(st.st_mode))
            throw fileError(option, path, "'" + path + "' is a directory, expected a file");
        if (::access(path.c_str(), W_OK) != 0)
            throw fileError(option, path, "cannot write '" + path + "': " + std::strerror(errno));
        return;
    }
    const std::size_t slash = path.rfind('/');
    const std::string dir =
        slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
    if (::access(dir.c_str(), W_OK | X_OK) != 0)
        throw fileError(option, path, "cannot create '" + path + "': " + std::strerror(errno));
}

}  // namespace

int main(int argc, char** argv) {
    // First of all, so that a stop request during start-up (which may take a while: plugins,
    // large flow tables) is honoured like any other rather than ending the process with 143.
    installSignals();

    using namespace rowprobe;
    using namespace rowprobe::core;
    CliResult cli;
    std::ofstream statsFile;
    try {
        cli = parseCommandLine(argc, argv);
        if (cli.action == CliResult::Action::Help) {
            std::cout << helpText(cli.helpTopic);
            return 0;
        }
        if (cli.action == CliResult::Action::Version) {
            std::cout << versionText() << '\n';
            return 0;
        }
        if (!cli.config.statsJson.empty())
            openAtStart(statsFile, "--stats-json", cli.config.statsJson);
        // The pid file is written once the pipeline is built (its existence says the inputs
        // are open), but whether it can be is checked now.
        if (!cli.config.pidFile.empty()) checkCreatable("--pid-file", cli.config.pidFile);
    } catch (const ConfigError& e) {
        if (statsFile.is_open()) {
            statsFile.close();
            std::remove(cli.config.statsJson.c_str());
        }
        return configError(e);
    }
    const Config& config = cli.config;
    bool pidWritten = false;
    auto removePidFile = [&] {  // only ours: a failed start leaves another's pid file alone
        if (pidWritten) std::remove(config.pidFile.c_str());
    };
    auto startFailed = [&] {  // nothing ran: leave no empty statistics file behind
        removePidFile();
        if (statsFile.is_open()) {
            statsFile.close();
            std::remove(config.statsJson.c_str());
        }
    };

    std::unique_ptr<Pipeline> pipeline;
    try {
        pipeline = std::make_unique<Pipeline>(config);
    } catch (const ConfigError& e) {
        startFailed();
        return configError(e);
    } catch (const std::exception& e) {
        startFailed();
        std::cerr << "rowprobe: error: " << describeFailure(e) << '\n';
        return 1;
    }

    std::unique_ptr<MetricsServer> metrics;
    if (!config.metrics.empty()) {
        try {
            metrics = std::make_unique<MetricsServer>(parseMetricsAddress(config.metrics),
                                                      [&pipeline] { return pipeline->stats(); });
        } catch (const ConfigError& e) {  // e.g. the port is in use: exit 2, not a restart loop
            startFailed();
            return configError(e);
        } catch (const std::exception& e) {
            startFailed();
            std::cerr << "rowprobe: error: " << e.what() << '\n';
            return 1;
        }
        std::cerr << "rowprobe: metrics on " << metrics->url() << '\n' << std::flush;
    }
    pipeline->reopenOutputsOn(g_reopen);

    if (!config.pidFile.empty()) {
        std::ofstream pid(config.pidFile);
        if (!pid || !(pid << getpid() << '\n' << std::flush)) {
            std::cerr << "rowprobe: error: cannot write pid file '" << config.pidFile
                      << "': " << std::strerror(errno ? errno : EIO) << '\n';
            startFailed();
            return 1;
        }
        pidWritten = true;
    }
    int rc = pipeline->run(g_stop);
    const StatsSnapshot stats = pipeline->stats();
    if (!config.quiet) std::cerr << formatStatsText(stats, nullptr);
    if (statsFile.is_open()) {
        if (!(statsFile << formatStatsJson(stats) << std::flush)) {
            std::cerr << "rowprobe: error: cannot write statistics to '" << config.statsJson
                      << "'\n";
            rc = 1;
        }
        statsFile.close();
    }
    removePidFile();
    if (rc != 0) {
        std::cerr << "rowprobe: error: " << pipeline->error() << '\n';
    } else if (stats.output.dropped > stats.output.discarded) {
        // Records that left the flow caches but were not delivered: the run failed its purpose
        // even though nothing crashed (a collector that never came up, a full disk, ...).
        std::cerr << "rowprobe: error: the output dropped "
                  << stats.output.dropped - stats.output.discarded << " of "
                  << stats.exported.records << " records (see the messages above)\n";
        rc = 1;
    }
    if (metrics) {
        // The values are final now; let a scraper read them for --metrics-linger seconds (a
        // signal ends the wait).
        metrics->markFinished();
        const auto until =
            std::chrono::steady_clock::now() + std::chrono::duration<double>(config.metricsLinger);
        while (!g_stop.load() && std::chrono::steady_clock::now() < until)
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (pipeline->inputsDetached()) {
        std::cout.flush();
        std::cerr.flush();
        std::_Exit(rc);  // an input thread is still blocked in a read: do not wait for it
    }
    return rc;
}
