#!/usr/bin/env bash
# rowprobe against the peer exporters on the same captures, runs interleaved (rowprobe, YAF,
# ipfixprobe, softflowd, rowprobe, ...) so that a busy machine slows all of them alike.
# Prints, per capture and tool, the medians of wall time, CPU time (user + system) and peak RSS,
# the packet rate, and each peer's wall and CPU time divided by rowprobe's (the goal of
# issue 11: >= 3x YAF and >= 6x ipfixprobe in wall time, one worker).
#
# The captures (large, small) are made once with rowprobe-tracegen: scripts/bench-common.sh.
# Every tool writes its flows as IPFIX and throws them away: rowprobe and YAF to /dev/null,
# ipfixprobe and softflowd over UDP to a local port nobody listens on.
#
# Usage: scripts/bench-peers.sh [RUNS] [large|small ...]
# Environment (a peer whose binary is not found is skipped):
#   ROWPROBE    rowprobe binary            (default build/release/core/rowprobe)
#   TRACEGEN    rowprobe-tracegen binary   (default build/release/tools/tracegen/rowprobe-tracegen)
#   YAF         yaf (or the wrapper ../shared/tools/build-peers.sh installs)
#                                          (default ~/.cache/rowprobe-peers/yaf, else yaf on PATH)
#   IPFIXPROBE  ipfixprobe                 (default ~/.cache/rowprobe-peers/ipfixprobe)
#   IPXP_PLUGINS its plugin directory      (default ~/.cache/rowprobe-peers/ipfixprobe-plugins)
#   SOFTFLOWD   softflowd                  (default softflowd on PATH)
#   DIR         where the captures go      (default /dev/shm/rowprobe-peers-bench)
#   ARGS        extra rowprobe arguments
#   PCAP_OPTS   appended to rowprobe's pcap input string, e.g. ';map=on' (always the map) or
#               ';map=off' (always read()); the default, map=auto, measures both at open
#   TOOLS       the tools to run, of "rowprobe yaf ipfixprobe softflowd" (default: all found;
#               softflowd is slow: about 16x rowprobe's wall time)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench-common.sh
runs=${1:-5}
shift $(( $# > 0 ? 1 : 0 ))
captures=("$@")
[[ ${#captures[@]} -gt 0 ]] || captures=(large small)
yaf=${YAF:-$peers/yaf}
[[ -x $yaf ]] || yaf=$(command -v yaf || true)
ipxp_plugins=${IPXP_PLUGINS:-$peers/ipfixprobe-plugins}
softflowd=${SOFTFLOWD:-$(command -v softflowd || true)}
read -r -a extra <<<"${ARGS:-}"

tools=(rowprobe)
[[ -n $yaf && -x $yaf ]] && tools+=(yaf) || echo "YAF not found: skipped" >&2
[[ -x $ipfixprobe ]] && tools+=(ipfixprobe) || echo "ipfixprobe not found: skipped" >&2
[[ -n $softflowd && -x $softflowd ]] && tools+=(softflowd) || echo "softflowd not found: skipped" >&2
if [[ -n ${TOOLS:-} ]]; then
    wanted=()
    for t in "${tools[@]}"; do [[ " $TOOLS " == *" $t "* || $t == rowprobe ]] && wanted+=("$t"); done
    tools=("${wanted[@]}")
fi

# cmd TOOL FILE: the command line of TOOL on FILE, one word per line.
cmd() {
    local f=$2
    case $1 in
        rowprobe) printf '%s\n' "$rowprobe" -i "pcap;file=$f${PCAP_OPTS:-}" -s 'cache;size=20' \
                      -o 'ipfix;file=/dev/null' -Q "${extra[@]}" ;;
        yaf) printf '%s\n' "$yaf" --in "$f" --out /dev/null ;;
        ipfixprobe) printf '%s\n' "$ipfixprobe" -L "$ipxp_plugins" -i "pcap;file=$f" \
                        -s 'cache;s=20' -o 'ipfix;h=127.0.0.1;p=4739;u' ;;
        softflowd) printf '%s\n' "$softflowd" -r "$f" -n 127.0.0.1:4739 -v 9 ;;
    esac
}

timing=$(mktemp)
trap 'rm -f "$timing"' EXIT
for c in "${captures[@]}"; do
    f=$(capture "$c")
    echo "== $c: $f ($(du -h "$f" | cut -f1), ${packets[$c]} packets), $runs interleaved runs"
    for t in "${tools[@]}"; do echo "   $t: $(cmd "$t" "$f" | tr '\n' ' ')"; done
    declare -A results=()
    for ((r = 0; r < runs; r++)); do
        for t in "${tools[@]}"; do
            mapfile -t argv < <(cmd "$t" "$f")
            /usr/bin/time -f '%e %U %S %M' -o "$timing" "${argv[@]}" >/dev/null 2>&1 || true
            results[$t]+="$(tail -1 "$timing");"
        done
    done
    for t in "${tools[@]}"; do echo "$t ${results[$t]}"; done | python3 -c '
import sys, statistics
pk = int(sys.argv[1])
rows = {}
for line in sys.stdin:
    tool, data = line.split(" ", 1)
    runs = [list(map(float, r.split())) for r in data.strip().strip(";").split(";") if r.strip()]
    wall = statistics.median(r[0] for r in runs)
    cpu = statistics.median(r[1] + r[2] for r in runs)
    rss = statistics.median(r[3] for r in runs) / 1024
    rows[tool] = (wall, cpu, rss)
base = rows["rowprobe"]
print("   %-11s %8s %8s %10s %12s %16s %15s" % ("tool", "wall s", "CPU s", "peak RSS", "Mpps (wall)", "wall / rowprobe", "CPU / rowprobe"))
for tool, (wall, cpu, rss) in rows.items():
    print(f"   {tool:<11} {wall:8.2f} {cpu:8.2f} {rss:8.0f} MB {pk / wall / 1e6:12.2f} {wall / base[0]:15.2f}x {cpu / base[1]:14.2f}x")
' "${packets[$c]}"
    unset results
done
