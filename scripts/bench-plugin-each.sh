#!/usr/bin/env bash
# What each process plugin costs on its own, and what all of them cost together: the
# attribution behind "all plugins enabled" in docs/performance.md. Per capture, runs
# interleaved (a busy machine slows every configuration alike):
#   none          rowprobe without plugins
#   NAME          rowprobe -p NAME, for every plugin of PLUGINS
#   all           rowprobe with every plugin of PLUGINS at once
# and prints, per configuration, the medians of CPU time (user + system, all threads), the
# worker's busy time per packet (--stats-json) and what it adds to `none`, and the peak RSS
# (the plugins' per-flow state is most of what they add on a trace of many flows).
#
# Usage: scripts/bench-plugin-each.sh [RUNS] [CAPTURE ...]
#   CAPTURE: large | small (scripts/bench-common.sh, made when missing) or a pcap path.
#   Default: 3 large.
# Environment: ROWPROBE, TRACEGEN, DIR (scripts/bench-common.sh);
#   PLUGINS  the plugins (default: every plugin `rowprobe -h process` lists, except the ones
#            that need a model or a library: classify, ndpi)
#   SIZE     log2 of the table size (default 20)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench-common.sh
runs=${1:-3}
shift $(( $# > 0 ? 1 : 0 ))
captures=("$@")
[[ ${#captures[@]} -gt 0 ]] || captures=(large)
size=${SIZE:-20}
if [[ -n ${PLUGINS:-} ]]; then
    read -r -a plugins <<<"$PLUGINS"
else
    mapfile -t plugins < <("$rowprobe" -h process 2>/dev/null |
        sed -n 's/^  \([a-z][a-z0-9]*\) .*/\1/p' | grep -v -x -e classify -e ndpi | sort -u)
fi
[[ ${#plugins[@]} -gt 0 ]] || { echo "no plugins found (set PLUGINS)" >&2; exit 2; }
configs=(none "${plugins[@]}" all)

timing=$(mktemp)
stats=$(mktemp)
trap 'rm -f "$timing" "$stats"' EXIT
for c in "${captures[@]}"; do
    f=$(capture "$c")
    echo "== $c: $f, $runs interleaved runs, ${#plugins[@]} plugins: ${plugins[*]}"
    declare -A results=()
    for ((r = 0; r < runs; r++)); do
        for t in "${configs[@]}"; do
            p=()
            case $t in
                none) ;;
                all) for n in "${plugins[@]}"; do p+=(-p "$n"); done ;;
                *) p=(-p "$t") ;;
            esac
            rm -f "$stats"
            /usr/bin/time -f '%U %S %M' -o "$timing" "$rowprobe" -i "pcap;file=$f" \
                -s "cache;size=$size" -o 'ipfix;file=/dev/null' -Q --stats-json "$stats" \
                "${p[@]}" >/dev/null 2>&1 || { echo "$t failed" >&2; continue; }
            busy=$(python3 -c 'import json,sys
t = json.load(open(sys.argv[1]))["total"]; print(t["busy_ns"], t["packets"])' "$stats")
            results[$t]+="$(tail -1 "$timing") $busy;"
        done
    done
    for t in "${configs[@]}"; do echo "$t ${results[$t]:-}"; done | python3 -c '
import sys, statistics
rows = {}
for line in sys.stdin:
    name, _, data = line.partition(" ")
    runs = [list(map(float, r.split())) for r in data.strip().strip(";").split(";") if r.strip()]
    if not runs:
        continue
    cpu = statistics.median(r[0] + r[1] for r in runs)
    rss = statistics.median(r[2] for r in runs) / 1024
    busy = statistics.median(r[3] / r[4] for r in runs)
    rows[name] = (cpu, busy, rss)
base = rows["none"]
print("   %-12s %7s %17s %15s %9s" % ("plugins", "CPU s", "worker ns/packet", "added ns/packet", "RSS MiB"))
for name, (cpu, busy, rss) in rows.items():
    print(f"   {name:<12} {cpu:7.2f} {busy:17.1f} {busy - base[1]:15.1f} {rss:9.0f}")
alone = sum(v[1] - base[1] for k, v in rows.items() if k not in ("none", "all"))
together = rows.get("all")
if together is not None:
    print(f"   sum of the plugins alone: {alone:.1f} ns/packet; all together: "
          f"{together[1] - base[1]:.1f} ns/packet")
'
    unset results
done
