#!/usr/bin/env bash
# What the process plugins cost end to end, and rowprobe with plugins against ipfixprobe with
# plugins (issue 15's speed acceptance). Per capture, runs interleaved (so that a busy machine
# slows all of them alike):
#   rowprobe                      no plugins
#   rowprobe + PLUGINS            default: -p http -p dns -p tls -p pstats
#   ipfixprobe                    no plugins                   (skipped when not found)
#   ipfixprobe + IPXP_PLUGINS     default: -p http -p dns -p tls -p quic
# and prints the medians of wall time, CPU time (user + system, all threads), the packet rate,
# rowprobe's worker busy time per packet (--stats-json: the worker thread alone, what the
# plugins add to), the plugins' cost per packet (busy time with minus without), the rate with
# plugins as a share of the rate without, and ipfixprobe's wall time over rowprobe's.
#
# Usage: scripts/bench-plugins.sh [RUNS] [CAPTURE ...]
#   CAPTURE: large | small (scripts/bench-common.sh, made when missing) or a
#   pcap path, e.g. ../shared/testdata/bench/netflix.pcap. Default: large small.
# Environment: ROWPROBE, TRACEGEN, IPFIXPROBE, IPXP_PLUGINS_DIR, DIR (scripts/bench-common.sh);
#   PLUGINS       rowprobe's plugins      (default "http dns tls pstats")
#   IPXP_PLUGINS  ipfixprobe's plugins    (default "http dns tls quic")
#   ARGS          extra rowprobe arguments (both rowprobe runs)
#   PCAP_OPTS     appended to rowprobe's pcap input string, e.g. ';map=on' (always the map) or
#                 ';map=off' (always read()); the default, map=auto, measures both at open
#   SIZE          log2 of rowprobe's and ipfixprobe's table size (default 20)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench-common.sh
runs=${1:-5}
shift $(( $# > 0 ? 1 : 0 ))
captures=("$@")
[[ ${#captures[@]} -gt 0 ]] || captures=(large small)
ipxp_dir=${IPXP_PLUGINS_DIR:-$peers/ipfixprobe-plugins}
size=${SIZE:-20}
read -r -a plugins <<<"${PLUGINS:-http dns tls pstats}"
read -r -a ipxp_plugins <<<"${IPXP_PLUGINS:-http dns tls quic}"
read -r -a extra <<<"${ARGS:-}"

rp_plugins=()
for p in "${plugins[@]}"; do rp_plugins+=(-p "$p"); done
ix_plugins=()
for p in "${ipxp_plugins[@]}"; do ix_plugins+=(-p "$p"); done
tools=(rowprobe rowprobe+plugins)
if [[ -x $ipfixprobe ]]; then
    tools+=(ipfixprobe ipfixprobe+plugins)
else
    echo "ipfixprobe not found ($ipfixprobe): skipped" >&2
fi

# cmd TOOL FILE STATS: the command line of TOOL on FILE, one word per line.
cmd() {
    local f=$2 stats=$3
    case $1 in
        rowprobe) printf '%s\n' "$rowprobe" -i "pcap;file=$f${PCAP_OPTS:-}" -s "cache;size=$size" \
                      -o 'ipfix;file=/dev/null' -Q --stats-json "$stats" "${extra[@]}" ;;
        rowprobe+plugins) cmd rowprobe "$f" "$stats"; printf '%s\n' "${rp_plugins[@]}" ;;
        ipfixprobe) printf '%s\n' "$ipfixprobe" -L "$ipxp_dir" -i "pcap;file=$f" \
                        -s "cache;s=$size" -o 'ipfix;h=127.0.0.1;p=4739;u' ;;
        ipfixprobe+plugins) cmd ipfixprobe "$f" "$stats"; printf '%s\n' "${ix_plugins[@]}" ;;
    esac
}

timing=$(mktemp)
stats=$(mktemp)
trap 'rm -f "$timing" "$stats"' EXIT
for c in "${captures[@]}"; do
    f=$(capture "$c")
    echo "== $c: $f ($(du -h "$f" | cut -f1)), $runs interleaved runs"
    for t in "${tools[@]}"; do echo "   $t: $(cmd "$t" "$f" STATS | tr '\n' ' ')"; done
    declare -A results=()
    for ((r = 0; r < runs; r++)); do
        for t in "${tools[@]}"; do
            mapfile -t argv < <(cmd "$t" "$f" "$stats")
            rm -f "$stats"
            /usr/bin/time -f '%e %U %S' -o "$timing" "${argv[@]}" >/dev/null 2>&1 || true
            busy=$(python3 -c 'import json,sys
try:
    t = json.load(open(sys.argv[1]))["total"]; print(t["busy_ns"], t["packets"])
except Exception:
    print(0, 0)' "$stats")
            results[$t]+="$(tail -1 "$timing") $busy;"
        done
    done
    for t in "${tools[@]}"; do echo "$t ${results[$t]}"; done | python3 -c '
import sys, statistics
rows = {}
packets = 0
for line in sys.stdin:
    tool, data = line.split(" ", 1)
    runs = [list(map(float, r.split())) for r in data.strip().strip(";").split(";") if r.strip()]
    wall = statistics.median(r[0] for r in runs)
    cpu = statistics.median(r[1] + r[2] for r in runs)
    busy = statistics.median(r[3] / r[4] for r in runs) if runs[0][4] else None
    packets = max(packets, max(r[4] for r in runs))
    rows[tool] = (wall, cpu, busy)
print("   %-19s %8s %8s %8s %18s" % ("tool", "wall s", "CPU s", "Mpps", "worker ns/packet"))
for tool, (wall, cpu, busy) in rows.items():
    b = f"{busy:18.1f}" if busy is not None else f"{chr(45):>18}"
    print(f"   {tool:<19} {wall:8.2f} {cpu:8.2f} {packets / wall / 1e6:8.2f} {b}")
rp, rpp = rows["rowprobe"], rows["rowprobe+plugins"]
print(f"   plugins cost per packet (worker): {rpp[2] - rp[2]:.1f} ns;"
      f" rate with plugins / without: {rp[0] / rpp[0] * 100:.0f} % (wall),"
      f" {rp[1] / rpp[1] * 100:.0f} % (CPU)")
if "ipfixprobe+plugins" in rows:
    ix, ixp = rows["ipfixprobe"], rows["ipfixprobe+plugins"]
    print(f"   ipfixprobe / rowprobe, wall: {ix[0] / rp[0]:.2f}x without plugins,"
          f" {ixp[0] / rpp[0]:.2f}x with them; CPU: {ix[1] / rp[1]:.2f}x, {ixp[1] / rpp[1]:.2f}x")
'
    unset results
done
