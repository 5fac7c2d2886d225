#!/usr/bin/env bash
# flowstats against NFStream 6.6 side by side on the same capture (issue 24's benchmark: goal
# at least 50x faster): NFStream (NFStreamer with statistical_analysis=True, splt_analysis=10,
# n_dissections=0, one meter, a year's timeouts, flows iterated but not written) and rowprobe
# (-p 'flowstats;splt=10' -o json to /dev/null, same timeouts), interleaved, RUNS times; prints
# the median wall times, packets per second of each (NFStream's packet count) and the ratio,
# then every run's pair of wall times and its ratio (on a noisy host the spread matters).
# NFStream comes from ~/.cache/rowprobe-venv (scripts/setup.sh) or ROWPROBE_NFSTREAM_PYTHON.
# NFSTREAM_CSV=1: NFStream writes every flow with its own to_csv (to /dev/null), as rowprobe
# writes its JSON, instead of only iterating them.
# ROWPROBE_OUTPUT=ipfix: rowprobe writes an IPFIX file (every flowstats field under an example
# PEN, SPLT as basicLists) to /dev/null instead of JSON lines.
# SETTLE=S: seconds of idle before each run of either tool (default 10), so that no run pays
# for the previous process's exit: on a VM that returns freed memory to its host (virtio free
# page reporting), rowprobe's runs started right after NFStream's exit (4.5 GB resident on the
# 1 M-flow capture) took ~0.5 s longer, with steal time (docs/performance.md, "Session 25").
#
# Usage: scripts/bench-nfstream.sh [RUNS] [CAPTURE ...]
#   CAPTURE: large | small (scripts/bench-common.sh, made when missing) or a pcap path.
#   Default: 3 large ../shared/testdata/bench/netflix.pcap
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench-common.sh
runs=${1:-3}
shift $(( $# > 0 ? 1 : 0 ))
captures=("$@")
[[ ${#captures[@]} -gt 0 ]] || captures=(large ../shared/testdata/bench/netflix.pcap)
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for c in "${captures[@]}"; do
    f=$(capture "$c")
    python3 scripts/compare-nfstream.py --bench --runs "$runs" --splt 10 --rowprobe "$rowprobe" \
        ${NFSTREAM_CSV:+--nfstream-csv} --rowprobe-output "${ROWPROBE_OUTPUT:-json}" \
        --settle "${SETTLE:-10}" "$f"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
