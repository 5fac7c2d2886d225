#!/usr/bin/env bash
# Installs what is missing, builds rowprobe and runs it on a bundled capture.
# Usage: scripts/demo.sh [extra rowprobe arguments, e.g. -o json]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --no-test-tools
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C build/release rowprobe
if [[ $# -eq 0 ]]; then
    set -- -o text
fi
exec build/release/core/rowprobe -i "pcap;file=pcaps/demo.pcap" -s "cache;seed=1" "$@"
