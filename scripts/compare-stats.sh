#!/usr/bin/env bash
# Compares the statistics two rowprobe binaries print on the same captures: the stderr table,
# the --stats-json document and a Prometheus scrape of the final values (--metrics with
# --metrics-linger). Timing values (wall and busy time, rates, uptime) differ from run to run
# and are masked; every name, every other value and the order of everything must be equal.
#
#   scripts/compare-stats.sh OLD_ROWPROBE NEW_ROWPROBE [CAPTURE...]
#
# Default captures: the project's own pcaps/mixed.pcap, malformed.pcap, tunnels.pcap and
# timeouts.pcap, each alone and with `-s 'cache;size=4'` (evictions, so that more counters are
# non-zero), and the first two read by two queues at once (the total row and merge). Exit 1 on
# a difference, with the diff.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
old=$1
new=$2
shift 2
captures=("$@")
if [ ${#captures[@]} -eq 0 ]; then
    captures=("$here/pcaps/mixed.pcap" "$here/pcaps/malformed.pcap" "$here/pcaps/tunnels.pcap"
        "$here/pcaps/timeouts.pcap")
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Masks the values that measure time: JSON wall_seconds / busy_ns / ns_per_packet / flush_ns /
# finish_ns, the text table's Mpps and ns/pkt columns, the metrics' busy, flush and finish
# seconds and uptime.
mask() {
    sed -E -e 's/"(wall_seconds|busy_ns|ns_per_packet|flush_ns|finish_ns)":[0-9.e+-]+/"\1":T/g' \
        -e 's/^(rowprobe_(busy_seconds_total|flush_seconds_total|export_finish_seconds_total|uptime_seconds)[^ ]*) .*/\1 T/' \
        -e 's/^([0-9a-z]+ +[0-9]+ +[0-9]+) +[0-9.]+ (.*[^ ]) +[0-9.]+$/\1 T \2 T/'
}

# One run with the given options: stderr, JSON and the scrape into $work/$tag.*
run() {
    local bin=$1 tag=$2
    shift 2
    local port=$((20000 + RANDOM % 20000))
    "$bin" "$@" -o "text;file=$work/$tag.flows" \
        --stats-json "$work/$tag.json" --metrics "127.0.0.1:$port" --metrics-linger 3 \
        2>"$work/$tag.err" &
    local pid=$!
    local scraped=0
    for _ in $(seq 1 40); do
        sleep 0.1
        if curl -s "http://127.0.0.1:$port/metrics" -o "$work/$tag.prom" &&
            grep -q '^rowprobe_finished 1' "$work/$tag.prom"; then
            scraped=1
            break
        fi
    done
    wait "$pid" || true
    [ "$scraped" = 1 ] || { echo "no final scrape from $bin $*" >&2; return 1; }
    grep -v '^rowprobe: metrics on' "$work/$tag.err" | mask >"$work/$tag.err.m"
    mask <"$work/$tag.json" >"$work/$tag.json.m"
    mask <"$work/$tag.prom" >"$work/$tag.prom.m"
}

compare() {
    run "$old" old "$@"
    run "$new" new "$@"
    for part in err json prom; do
        if ! diff -u "$work/old.$part.m" "$work/new.$part.m"; then
            echo "DIFFERENT: $part of $*" >&2
            status=1
        fi
    done
    echo "compared $*: stderr $(wc -l <"$work/new.err.m") lines, json $(wc -c <"$work/new.json.m") bytes, metrics $(wc -l <"$work/new.prom.m") lines"
}

status=0
for capture in "${captures[@]}"; do
    compare -i "pcap;file=$capture"
    compare -i "pcap;file=$capture" -s "cache;size=4"
done
if [ ${#captures[@]} -ge 2 ]; then
    compare -i "pcap;file=${captures[0]}" -i "pcap;file=${captures[1]}"
fi
exit $status
