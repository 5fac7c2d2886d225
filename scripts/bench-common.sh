# Sourced by scripts/bench-peers.sh and scripts/bench-plugins.sh: where the tools are, and the
# two benchmark captures, made once with rowprobe-tracegen (the gen input's traffic model, exact
# and reproducible from the options below):
#   large  ~100k flows, large packets: 1.88 M packets of 740 B (1.4 GB)
#   small  ~1M flows, small packets: 7 M packets of 289 B (2.1 GB), 131 072 concurrent flows
#          of 7 packets each
# Environment: ROWPROBE, TRACEGEN, IPFIXPROBE (the binaries), DIR (where the captures go,
# default /dev/shm/rowprobe-peers-bench).
peers=${HOME}/.cache/rowprobe-peers
rowprobe=${ROWPROBE:-build/release/core/rowprobe}
tracegen=${TRACEGEN:-build/release/tools/tracegen/rowprobe-tracegen}
ipfixprobe=${IPFIXPROBE:-$peers/ipfixprobe}
dir=${DIR:-/dev/shm/rowprobe-peers-bench}
mkdir -p "$dir"

declare -A model=(
    [large]='pattern=random;flows=100000;packets=1880000;size=740;tcp=0.5;reverse=0.3;seed=11'
    [small]='pattern=random;flows=131072;packets=7000000;packets-per-flow=7;size=289;tcp=0.5;reverse=0.3;seed=12'
)
declare -A packets=([large]=1880000 [small]=7000000)

# capture NAME: the path of benchmark capture NAME (large, small), made when missing; any other
# NAME is taken as a path and printed as it is.
capture() {
    [[ -n ${model[$1]:-} ]] || { printf '%s\n' "$1"; return; }
    local f=$dir/$1.pcap
    if [[ ! -s $f ]]; then
        echo "making $f: rowprobe-tracegen '${model[$1]}'" >&2
        "$tracegen" -w "$f.tmp" -t /dev/null "${model[$1]}" >/dev/null && mv "$f.tmp" "$f"
    fi
    printf '%s\n' "$f"
}
