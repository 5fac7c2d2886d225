#!/usr/bin/env bash
# Two rowprobe binaries on the same captures, interleaved (A B A B ...), for a change whose gain
# must be told from a loaded machine's noise: per binary and configuration the medians of wall
# time, CPU time (user + system, all threads), peak RSS and perf stat's task-clock, then one
# `perf record -e task-clock` per binary with each thread's share of the samples (--sort comm).
# Configurations: `plain` (no process plugin, JSON to /dev/null) and `flowstats` (the command
# line of scripts/compare-nfstream.py's rowprobe_cmd: -p 'flowstats;splt=10' -o json); with
# CONFIGS also `flowstats-ipfix` (the same with every flowstats field under RFC 5612's example
# PEN in an IPFIX file to /dev/null, as bench-nfstream.sh's ROWPROBE_OUTPUT=ipfix).
#   e.g. CONFIGS="flowstats flowstats-ipfix" scripts/bench-ab.sh OLD NEW 5 small
#
# Usage: scripts/bench-ab.sh OLD_BINARY NEW_BINARY [RUNS] [CAPTURE ...]
#   CAPTURE: large | small (scripts/bench-common.sh, made when missing) or a pcap path.
#   Default: 5 runs, large small.
#   e.g. scripts/bench-ab.sh /tmp/rowprobe-main build/release/core/rowprobe 5 large small
# Prints the load average before and after each capture. Needs perf (linux-perf) and GNU time.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $# -ge 2 ]] || { sed -n 2,16p "$0" >&2; exit 2; }
old=$1 new=$2
runs=${3:-5}
shift $(( $# > 2 ? 3 : 2 ))
source scripts/bench-common.sh
captures=("$@")
[[ ${#captures[@]} -gt 0 ]] || captures=(large small)
work=$(mktemp -d /tmp/rowprobe-bench-ab.XXXXXX)
trap 'rm -rf "$work"' EXIT
year=31536000

command_of() {  # command_of BINARY CONFIG CAPTURE_FILE
    local args=("$1" -i "pcap;file=$3" -s "cache;size=20;active=$year;inactive=$year"
                --tunnel outer)
    case $2 in
        flowstats) args+=(-p "flowstats;splt=10;accounting=link" -o "json;file=/dev/null") ;;
        flowstats-ipfix) args+=(-p "flowstats;splt=10;accounting=link;pen=32473"
                                -o "ipfix;file=/dev/null") ;;
        *) args+=(-o "json;file=/dev/null") ;;
    esac
    printf '%s\n' "${args[@]}"
}

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

for c in "${captures[@]}"; do
    f=$(capture "$c")
    echo "== $c ($f), $runs interleaved runs; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
    for config in ${CONFIGS:-plain flowstats}; do
        for ((i = 0; i < runs; ++i)); do
            for side in old new; do
                bin=$old
                [[ $side = new ]] && bin=$new
                mapfile -t cmd < <(command_of "$bin" "$config" "$f")
                perf stat -x, -e task-clock,instructions,cycles -o "$work/perf" \
                    /usr/bin/time -f '%e %U %S %M' -o "$work/time" "${cmd[@]}" >/dev/null \
                    2>"$work/stderr" || { cat "$work/stderr" >&2; exit 1; }
                read -r wall user sys rss < "$work/time"
                clock=$(awk -F, '$3 == "task-clock" {print $1 / 1000}' "$work/perf")
                insns=$(awk -F, '$3 == "instructions" {print ($1 ~ /^[0-9]/) ? $1 / 1e9 : "n/a"}' "$work/perf")
                cycles=$(awk -F, '$3 == "cycles" {print ($1 ~ /^[0-9]/) ? $1 / 1e9 : "n/a"}' "$work/perf")
                echo "$wall $(echo "$user + $sys" | bc) $user $sys $rss $clock $insns $cycles" >> "$work/$config.$side"
            done
        done
        for side in old new; do
            d=$work/$config.$side
            printf '%-9s %-3s wall %.3f s  cpu %.3f s (user %.3f, sys %.3f)  task-clock %.3f s  peak RSS %d MB' \
                "$config" "$side" "$(cut -d' ' -f1 "$d" | median)" "$(cut -d' ' -f2 "$d" | median)" \
                "$(cut -d' ' -f3 "$d" | median)" "$(cut -d' ' -f4 "$d" | median)" \
                "$(cut -d' ' -f6 "$d" | median)" "$(( $(cut -d' ' -f5 "$d" | median | cut -d. -f1) / 1024 ))"
            if grep -q n/a "$d"; then
                echo "  instructions n/a  cycles n/a"
            else
                printf '  instructions %.3f G  cycles %.3f G\n' "$(cut -d' ' -f7 "$d" | median)" \
                    "$(cut -d' ' -f8 "$d" | median)"
            fi
        done
        for side in old new; do
            bin=$old
            [[ $side = new ]] && bin=$new
            mapfile -t cmd < <(command_of "$bin" "$config" "$f")
            perf record -q -e task-clock -o "$work/perf.data" -- "${cmd[@]}" >/dev/null 2>&1
            echo "$config $side: share of task-clock samples per thread"
            perf report -q -i "$work/perf.data" --sort comm --stdio 2>/dev/null |
                awk 'NF >= 2 {printf "    %-14s %s\n", $2, $1}'
        done
    done
    echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
done
