#!/usr/bin/env bash
# Runs the README's test command (.ci/run) RUNS times, each on a fresh clone of this
# repository's HEAD with ../shared beside it, STREAMS clones at a time, so that every run
# shares the machine with the others (and with HOGS `yes > /dev/null` processes): a suite that
# passes only on a quiet machine fails here. A stream stops at its first failing run; the
# script prints one line per run (start, minutes, load average, ctest's summary lines) and
# exits 0 only when every run passed.
#
# Usage: scripts/soak-ci.sh [RUNS] [STREAMS] [HOGS]     (defaults: 5 2 0)
# Environment: SOAK_DIR (default /tmp/rowprobe-soak) holds run-N/{main,shared,log}; a passed
# run's build directories are removed to save disk space (about 5 GB each), its log is kept.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
streams=${2:-2}
hogs=${3:-0}
repo=$(pwd)
shared=$(cd ../shared 2>/dev/null && pwd) || { echo "soak-ci.sh: ../shared not found" >&2; exit 2; }
dir=${SOAK_DIR:-/tmp/rowprobe-soak}
commit=$(git rev-parse HEAD)
mkdir -p "$dir"

source scripts/hogs.sh
start_hogs "$hogs"

one_run() {  # index
    local n=$1 d="$dir/run-$1" t0 rc=0
    rm -rf "$d"
    mkdir -p "$d"
    git clone -q "$repo" "$d/main"
    git -C "$d/main" checkout -q "$commit"
    ln -s "$shared" "$d/shared"
    t0=$(date +%s)
    echo "run $n: started $(date -u +%H:%M:%S) UTC, load average $(cut -d' ' -f1-3 /proc/loadavg)"
    (cd "$d/main" && CI=true bash .ci/run) >"$d/log" 2>&1 || rc=$?
    local summary
    summary=$(grep -E 'tests passed|tests failed out of|stage FAILED' "$d/log" | tr '\n' ';' || true)
    echo "run $n: $([[ $rc = 0 ]] && echo passed || echo "FAILED (exit $rc)") in" \
        "$(( ($(date +%s) - t0) / 60 )) min, load average $(cut -d' ' -f1-3 /proc/loadavg): $summary"
    [[ $rc -ne 0 ]] || rm -rf "$d/main/build"
    return $rc
}

stream() {  # first index; runs every STREAMS-th index from it
    local i
    for ((i = $1; i <= runs; i += streams)); do one_run "$i" || return 1; done
}

echo "soak of $commit: $runs runs, $streams at a time, $hogs hogs, in $dir"
workers=()
for ((s = 1; s <= streams && s <= runs; ++s)); do
    stream "$s" &
    workers+=($!)
done
status=0
for w in "${workers[@]}"; do wait "$w" || status=1; done
echo "soak of $commit: $([[ $status = 0 ]] && echo "all $runs runs passed" || echo FAILED)"
exit $status
