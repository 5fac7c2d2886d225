#!/usr/bin/env bash
# Runs the threaded expiry tests (issue 21 item 15: the statistics at shutdown in thread expiry
# mode) N times in a row beside CPU hogs, stopping at the first failure.
#
# Usage: scripts/stress-threaded.sh [BUILD] [N] [HOGS]
#   BUILD  a configured build directory (default build/release; e.g. build/tsan for the
#          ThreadSanitizer build of docs/regression-tests.md)
#   N      runs (default 50)
#   HOGS   `yes > /dev/null` processes beside the tests (default 2)
# Environment: FILTER_E2E, FILTER_STORAGE override the gtest filters (default ExpiryModes.* in
# test_e2e, ExpiryThread.* in test_storage; an empty filter leaves that binary out).
# Prints one line per run and the load average; exit status 0 when every run passed.
set -euo pipefail
build=${1:-build/release}
runs=${2:-50}
hogs=${3:-2}
e2e=${FILTER_E2E-ExpiryModes.*}
storage=${FILTER_STORAGE-ExpiryThread.*}
ninja -C "$build" -j2 core/rowprobe tests/test_e2e tests/test_storage >/dev/null

source "$(dirname "$0")/hogs.sh"
start_hogs "$hogs"

log=$(mktemp /tmp/stress-threaded.XXXXXX)
for ((i = 1; i <= runs; ++i)); do
    t0=$(date +%s)
    ok=1
    if [[ -n $e2e ]]; then "$build/tests/test_e2e" --gtest_filter="$e2e" >"$log" 2>&1 || ok=0; fi
    if [[ $ok = 1 && -n $storage ]]; then
        "$build/tests/test_storage" --gtest_filter="$storage" >"$log" 2>&1 || ok=0
    fi
    echo "run $i/$runs: $([[ $ok = 1 ]] && echo passed || echo FAILED) in $(($(date +%s) - t0)) s," \
        "load average $(cut -d' ' -f1-3 /proc/loadavg)"
    if [[ $ok = 0 ]]; then
        grep -E -A6 ': Failure$|WARNING: ThreadSanitizer' "$log" | head -40
        echo "log: $log"
        exit 1
    fi
done
rm -f "$log"
echo "$runs runs in a row passed beside $hogs CPU hogs"
