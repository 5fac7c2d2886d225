// rowprobe: command-line entry point. Exit codes: 0 success, 1 runtime failure (I/O, output),
// 2 configuration error (bad option or plugin string), printed as one message.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <thread>

#include "cli.hpp"
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

}  // namespace

int main(int argc, char** argv) {
    using namespace rowprobe;
    using namespace rowprobe::core;
    CliResult cli;
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
    } catch (const ConfigError& e) {
        return configError(e);
    }
    const Config& config = cli.config;

    std::unique_ptr<Pipeline> pipeline;
    try {
        pipeline = std::make_unique<Pipeline>(config);
    } catch (const ConfigError& e) {
        return configError(e);
    } catch (const std::exception& e) {
        std::cerr << "rowprobe: error: " << e.what() << '\n';
        return 1;
    }

    std::unique_ptr<MetricsServer> metrics;
    if (!config.metrics.empty()) {
        try {
            metrics = std::make_unique<MetricsServer>(parseMetricsAddress(config.metrics),
                                                      [&pipeline] { return pipeline->stats(); });
        } catch (const std::exception& e) {
            std::cerr << "rowprobe: error: " << e.what() << '\n';
            return 1;
        }
        std::cerr << "rowprobe: metrics on " << metrics->url() << '\n' << std::flush;
    }
    pipeline->reopenOutputsOn(g_reopen);

    if (!config.pidFile.empty()) {
        std::ofstream pid(config.pidFile);
        if (!pid || !(pid << getpid() << '\n')) {
            std::cerr << "rowprobe: error: cannot write pid file '" << config.pidFile << "'\n";
            return 1;
        }
    }
    installSignals();
    const int rc = pipeline->run(g_stop);
    const StatsSnapshot stats = pipeline->stats();
    if (!config.quiet) std::cerr << formatStatsText(stats, nullptr);
    if (!config.statsJson.empty()) {
        std::ofstream out(config.statsJson);
        if (!out || !(out << formatStatsJson(stats))) {
            std::cerr << "rowprobe: error: cannot write statistics to '" << config.statsJson
                      << "'\n";
            return 1;
        }
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
    if (!config.pidFile.empty()) std::remove(config.pidFile.c_str());
    if (rc != 0) std::cerr << "rowprobe: error: " << pipeline->error() << '\n';
    if (pipeline->inputsDetached()) {
        std::cout.flush();
        std::cerr.flush();
        std::_Exit(rc);  // an input thread is still blocked in a read: do not wait for it
    }
    return rc;
}
