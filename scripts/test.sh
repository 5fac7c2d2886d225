#!/usr/bin/env bash
# Builds rowprobe and runs the whole test suite: the release build (warnings as errors) with
# every test, then an ASan+UBSan build and a TSan build running the unit and threaded tests.
# Usage: scripts/test.sh [--quick]   (--quick: release build and tests only)
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
jobs=$(nproc)

configure() {  # dir, extra cmake args...
    local dir=$1
    shift
    cmake -S . -B "$dir" -G Ninja -DROWPROBE_WERROR=ON "$@" >/dev/null
}

status=0
if [[ "${1:-}" != "--quick" ]]; then
    configure build/asan -DCMAKE_BUILD_TYPE=Debug -DROWPROBE_SANITIZE=address -DROWPROBE_NATIVE=OFF
    ninja -C build/asan -j"$jobs"
    (cd build/asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        ctest --output-on-failure -j"$jobs" --timeout 900 -L 'plugins|storage|input|output|core|e2e') \
        || status=$?

    configure build/tsan -DCMAKE_BUILD_TYPE=Debug -DROWPROBE_SANITIZE=thread -DROWPROBE_NATIVE=OFF
    ninja -C build/tsan -j"$jobs"
    (cd build/tsan && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
        ctest --output-on-failure -j"$jobs" --timeout 900 -L 'e2e|core') || status=$?
fi

# The release build and the full suite last, so the final lines are ctest's summary.
configure build/release -DCMAKE_BUILD_TYPE=Release
ninja -C build/release -j"$jobs"
(cd build/release && ctest --output-on-failure -j"$jobs" --timeout 600) || status=$?
exit $status
