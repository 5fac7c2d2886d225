#!/usr/bin/env bash
# Trains the shipped example classify models (process/classify/models/) on the nDPI 4.2
# captures of ../shared/testdata (24 small test captures and 4 benchmark captures), labelled by
# nDPI's own expected output for each (.out files; DPI matches only). Flows: rowprobe with
# pstats, default timeouts. Reproducible: the split is seeded.
#
# Usage: scripts/train-example-model.sh [OUTDIR]     (default process/classify/models)
# Environment: ROWPROBE, TRAIN (the built binaries), TESTDATA (../shared/testdata),
#   LABEL (full), PACKETS (4), MIN_SAMPLES (10), SEED (1)
set -euo pipefail
cd "$(dirname "$0")/.."
rowprobe=${ROWPROBE:-build/release/core/rowprobe}
train=${TRAIN:-build/release/tools/train/rowprobe-train}
testdata=${TESTDATA:-../shared/testdata}
out=${1:-process/classify/models}
label=${LABEL:-full}
packets=${PACKETS:-4}
min_samples=${MIN_SAMPLES:-10}
seed=${SEED:-1}
[[ -x $rowprobe && -x $train ]] || { echo "build rowprobe and rowprobe-train first" >&2; exit 1; }
[[ -d $testdata/ndpi-4.2 ]] || { echo "no $testdata/ndpi-4.2" >&2; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
inputs=()
for pcap in "$testdata"/ndpi-4.2/pcap/*.pcap "$testdata"/bench/*.pcap; do
    name=$(basename "$pcap")
    labels=$testdata/ndpi-4.2/result/$name.out
    [[ -f $labels ]] || labels=$pcap.out
    [[ -f $labels ]] || continue
    "$rowprobe" -i "pcap;file=$pcap" -p pstats -o "json;file=$work/$name.json" -Q >/dev/null
    inputs+=(--flows "$work/$name.json" --ndpi-out "$labels")
done
mkdir -p "$out"
common=(--label "$label" --packets "$packets" --min-samples "$min_samples" --seed "$seed"
        "${inputs[@]}")
"$train" --model nb "${common[@]}" --out "$out/example-nb.rpcm" --report "$out/example-nb.txt"
"$train" --model tree "${common[@]}" --out "$out/example-tree.rpcm" \
    --report "$out/example-tree.txt"
