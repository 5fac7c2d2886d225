#!/usr/bin/env bash
# End-to-end throughput: pcap file -> parser -> flow cache -> json output to /dev/null, one
# worker, on the synthetic 10k-flow trace (../shared/testdata/bench/synth_10k_flows.pcap.gz,
# decompressed once to /dev/shm). Prints the median of RUNS runs.
# Usage: scripts/bench-e2e.sh [BINARY] [RUNS] [extra rowprobe arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/release/core/rowprobe}
runs=${2:-9}
shift $(( $# > 2 ? 2 : $# ))
gz=../shared/testdata/bench/synth_10k_flows.pcap.gz
pcap=/dev/shm/rowprobe-synth_10k_flows.pcap
if [[ ! -s $pcap ]]; then
    gunzip -c "$gz" > "$pcap.tmp" && mv "$pcap.tmp" "$pcap"
fi
stats=$(mktemp)
trap 'rm -f "$stats"' EXIT
results=()
for ((i = 0; i < runs; i++)); do
    start=$(date +%s.%N)
    "$bin" -i "pcap;file=$pcap" -s 'cache;seed=1' -o 'json;file=/dev/null' -Q --stats-json "$stats" "$@"
    end=$(date +%s.%N)
    results+=("$(python3 - "$stats" "$start" "$end" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
t = s["total"]
process = float(sys.argv[3]) - float(sys.argv[2])
print(f'{t["packets"] / s["wall_seconds"] / 1e6:.2f} {t["packets"] / process / 1e6:.2f} '
      f'{t["busy_ns"] / t["packets"]:.1f} {t["packets"]}')
PY
)")
done
printf '%s\n' "${results[@]}" | sort -n | awk -v n="$runs" '
    { pipe[NR] = $1; proc[NR] = $2; ns[NR] = $3; pk = $4 }
    END {
        m = int((n + 1) / 2)
        printf "packets %d, runs %d (median): pipeline %.2f Mpps, whole process %.2f Mpps, worker %.1f ns/packet\n",
               pk, n, pipe[m], proc[m], ns[m]
    }'
