#!/usr/bin/env bash
# Threaded features, end to end (docs/performance.md: "Expiry modes", "Queues", "Flood"):
#   expiry   inline vs thread expiry on one worker: the synthetic 10k-flow trace with the
#            default and with short timeouts, and the flow-heavy trace below
#   queues   flow-heavy workload: one worker on file A; two workers with one file each (-i A
#            -i B); the single-file distributor (-q 2) on the file A+B; one worker on A+B
#   flood    background-only vs a sustained SYN flood mixed into the same background
#   ratio    1 worker on A against 2 workers on A and B, alternated RUNS times: the medians and
#            their ratio (steadier than best-of on a shared machine)
# Every configuration runs RUNS times and the best run is printed: the pipeline rate (packets /
# --stats-json wall_seconds), the process's CPU time (user+sys), its peak RSS (the table plus the
# memory-mapped capture) and the workers' busy time per packet (parse + flow table, including
# waits for room in the export ring).
# Traces are generated once into /dev/shm/rowprobe-bench with rowprobe-tracegen (the gen input's
# traffic model: exact and reproducible from the options printed below).
# Usage: scripts/bench-queues.sh [BUILD_DIR] [RUNS] [expiry|queues|flood|ratio ...]
#   OUTPUT='ipfix;file=/dev/null' scripts/bench-queues.sh ...   (default: json to /dev/null)
#   ARGS='--input-thread no' scripts/bench-queues.sh ...         (added to every rowprobe run)
#   ROWPROBE=/path/to/rowprobe scripts/bench-queues.sh ...        (another build, e.g. an older one)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
runs=${2:-5}
shift $(( $# > 2 ? 2 : $# ))
sections=("$@")
[[ ${#sections[@]} -gt 0 ]] || sections=(expiry queues flood)
output=${OUTPUT:-json;file=/dev/null}
bin=${ROWPROBE:-$build/core/rowprobe}
read -r -a extra <<<"${ARGS:-}"
tracegen=$build/tools/tracegen/rowprobe-tracegen
dir=/dev/shm/rowprobe-bench
mkdir -p "$dir"

# Flow-heavy: 262 144 concurrent flows drawn uniformly (the table's working set is far beyond
# the caches), a flow ends after 16 packets and a new one takes its slot: 4 M packets and about
# 357 000 records per file. A and B differ only in the seed.
heavy='pattern=random;flows=262144;packets=4000000;packets-per-flow=16;tcp=0.5;reverse=0.3'
heavy_cache='cache;seed=1;size=20'
gen() {  # file, gen options
    [[ -s $1 ]] || "$tracegen" -w "$1" -t /dev/null "$2" >/dev/null
}

synth=/dev/shm/rowprobe-synth_10k_flows.pcap  # shared with scripts/bench-e2e.sh
if [[ ! -s $synth ]]; then
    gunzip -c ../shared/testdata/bench/synth_10k_flows.pcap.gz > "$synth.tmp" && mv "$synth.tmp" "$synth"
fi

stats=$(mktemp)
timing=$(mktemp)
trap 'rm -f "$stats" "$timing"' EXIT

# run LABEL rowprobe-arguments...: best of $runs (highest pipeline rate).
run() {
    local label=$1
    shift
    local results=()
    for ((i = 0; i < runs; i++)); do
        /usr/bin/time -f '%U %S %M' -o "$timing" \
            "$bin" "$@" "${extra[@]}" -o "$output" -Q --stats-json "$stats" 2>/dev/null
        results+=("$(python3 - "$stats" "$timing" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
user, sys_, rss = open(sys.argv[2]).read().split()[-3:]
t = s["total"]
cpu = float(user) + float(sys_)
print(f'{t["packets"] / s["wall_seconds"] / 1e6:.2f} {s["wall_seconds"]:.3f} {cpu:.2f} '
      f'{int(rss) // 1024} {t["busy_ns"] / t["packets"]:.0f} {t["packets"]} {s["export"]["records"]}')
PY
)")
    done
    printf '%s\n' "${results[@]}" | sort -rn | head -1 | awk -v label="$label" -v n="$runs" '
        { printf "%-42s %5.2f Mpps  wall %6.3f s  cpu %5.2f s  rss %4d MiB  worker %3d ns/pkt  (%d packets, %d records, best of %d)\n",
                 label, $1, $2, $3, $4, $5, $6, $7, n }'
}

echo "# $(date -u +%FT%TZ) $(uname -n), $(nproc) CPUs, load average: $(cut -d' ' -f1-3 /proc/loadavg), -o '$output'"
for section in "${sections[@]}"; do
    case $section in
    expiry)
        gen "$dir/heavy-a.pcap" "$heavy;seed=11"
        echo "## expiry modes, one worker"
        for e in inline thread; do
            run "synth10k default timeouts, expiry=$e" -i "pcap;file=$synth" -s "cache;seed=1;expiry=$e"
        done
        for e in inline thread; do
            run "synth10k inactive=0.05 active=0.2, expiry=$e" -i "pcap;file=$synth" \
                -s "cache;seed=1;inactive=0.05;active=0.2;expiry=$e"
        done
        for e in inline thread; do
            run "flow-heavy A, expiry=$e" -i "pcap;file=$dir/heavy-a.pcap" -s "$heavy_cache;expiry=$e"
        done
        for e in inline thread; do
            run "flow-heavy A inactive=0.1, expiry=$e" -i "pcap;file=$dir/heavy-a.pcap" \
                -s "$heavy_cache;inactive=0.1;expiry=$e"
        done
        ;;
    ratio)
        gen "$dir/heavy-a.pcap" "$heavy;seed=11"
        gen "$dir/heavy-b.pcap" "$heavy;seed=12"
        one=() two=()
        for ((i = 0; i < runs; i++)); do
            for w in 1 2; do
                inputs=(-i "pcap;file=$dir/heavy-a.pcap")
                [[ $w == 2 ]] && inputs+=(-i "pcap;file=$dir/heavy-b.pcap")
                "$bin" "${inputs[@]}" -s "$heavy_cache" "${extra[@]}" -o "$output" -Q \
                    --stats-json "$stats" 2>/dev/null
                rate=$(python3 -c 'import json, sys; s = json.load(open(sys.argv[1]))
print(s["total"]["packets"] / s["wall_seconds"] / 1e6)' "$stats")
                if [[ $w == 1 ]]; then one+=("$rate"); else two+=("$rate"); fi
            done
        done
        python3 - "${one[*]}" "${two[*]}" "$bin" "$runs" <<'PY'
import statistics, sys
one = [float(x) for x in sys.argv[1].split()]
two = [float(x) for x in sys.argv[2].split()]
m1, m2 = statistics.median(one), statistics.median(two)
print(f'## ratio, {sys.argv[3]}, {sys.argv[4]} alternated rounds')
print(f'1 worker, file A: median {m1:.2f} Mpps; 2 workers, -i A -i B: median {m2:.2f} Mpps; '
      f'ratio of medians {m2 / m1:.2f}')
PY
        ;;
    queues)
        gen "$dir/heavy-a.pcap" "$heavy;seed=11"
        gen "$dir/heavy-b.pcap" "$heavy;seed=12"
        # A+B as one capture: both files' flows, 8 M packets, in one packet-time order.
        gen "$dir/heavy-ab.pcap" "${heavy/flows=262144;packets=4000000/flows=524288;packets=8000000};seed=13"
        echo "## queues, flow-heavy ($heavy, -s '$heavy_cache')"
        run "1 worker, file A (4 M packets)" -i "pcap;file=$dir/heavy-a.pcap" -s "$heavy_cache"
        run "1 worker, file A+B (8 M packets)" -i "pcap;file=$dir/heavy-ab.pcap" -s "$heavy_cache"
        run "2 workers, -i A -i B (8 M packets)" -i "pcap;file=$dir/heavy-a.pcap" \
            -i "pcap;file=$dir/heavy-b.pcap" -s "$heavy_cache"
        run "2 workers, -i A -i B, --cpus 0,1" -i "pcap;file=$dir/heavy-a.pcap" \
            -i "pcap;file=$dir/heavy-b.pcap" -s "$heavy_cache" --cpus 0,1
        run "2 workers, distributor -q 2, file A+B" -i "pcap;file=$dir/heavy-ab.pcap" -q 2 -s "$heavy_cache"
        run "1 worker, synth10k" -i "pcap;file=$synth" -s 'cache;seed=1'
        run "2 workers, distributor -q 2, synth10k" -i "pcap;file=$synth" -q 2 -s 'cache;seed=1'
        ;;
    flood)
        # Background: Zipf popularity (skew 0.8) over 200 000 flow slots, a flow ends after 20
        # packets and a new one takes its slot: 6 M packets at 100 000 per second (60 s of packet
        # time, ~25 000 new flows per 5 s interval). Flood: 3 M lone spoofed SYNs (netscan, every
        # packet a new flow) at 100 000 per second from 20 s to 50 s, merged in by time: the
        # 2^20-record table is full of them after ~10 s, so every SYN then evicts a flow.
        gen "$dir/background.pcap" 'pattern=zipf;flows=200000;packets=6000000;packets-per-flow=20;skew=0.8;seed=21;pps=100000'
        gen "$dir/syn.pcap" 'pattern=netscan;flows=1000000;packets=3000000;tcp=1;seed=22;pps=100000;start=1700000020'
        if [[ ! -s $dir/flood.pcap ]]; then
            python3 - "$dir/background.pcap" "$dir/syn.pcap" "$dir/flood.pcap" <<'PY'
import heapq, os, struct, sys
def packets(path):
    with open(path, 'rb') as f:
        f.read(24)
        while len(h := f.read(16)) == 16:
            sec, frac, caplen, _ = struct.unpack('<IIII', h)
            yield sec * 10**9 + frac, h + f.read(caplen)
with open(sys.argv[1], 'rb') as f:
    head = f.read(24)
with open(sys.argv[3] + '.tmp', 'wb') as out:
    out.write(head)
    for _, rec in heapq.merge(packets(sys.argv[1]), packets(sys.argv[2]), key=lambda p: p[0]):
        out.write(rec)
os.rename(sys.argv[3] + '.tmp', sys.argv[3])
PY
        fi
        flood_cache='cache;seed=1;size=20'
        echo "## flood (background: zipf, 6 M packets in 60 s; flood: + 3 M lone SYNs from 20 s to 50 s)"
        run "background only" -i "pcap;file=$dir/background.pcap" -s "$flood_cache"
        run "background + SYN flood" -i "pcap;file=$dir/flood.pcap" -s "$flood_cache"
        run "background + SYN flood, second-packet" -i "pcap;file=$dir/flood.pcap" \
            -s "$flood_cache;flood-admission=second-packet"
        run "background + SYN flood, back" -i "pcap;file=$dir/flood.pcap" -s "$flood_cache;flood-admission=back"
        # Peak RSS without the memory-mapped capture (read from standard input instead).
        for f in background flood; do
            /usr/bin/time -f '%M' -o "$timing" "$bin" -i 'pcap;file=-' -s "$flood_cache" \
                -o 'json;file=/dev/null' -Q <"$dir/$f.pcap" 2>/dev/null
            echo "peak RSS, $f from standard input: $(( $(tail -1 "$timing") / 1024 )) MiB"
        done
        ;;
    *)
        echo "unknown section '$section' (expiry, queues, flood, ratio)" >&2
        exit 2
        ;;
    esac
done
