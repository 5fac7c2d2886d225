#!/usr/bin/env bash
# Two rowprobe binaries' JSON on the same captures, compared as multisets of lines (one flow per
# line): for outputs whose line order is not fixed (the export thread's order on the bench
# captures), where scripts/compare-outputs.sh compares files byte for byte. Runs the command
# line of scripts/compare-nfstream.py's rowprobe_cmd (flowstats, splt=10, link accounting, a
# year's timeouts, JSON) with the table's hash seed fixed (`seed=1`: the default seed changes
# from run to run, and on `small`, whose 1 M flows overflow some rows, it changes which flows
# are evicted and so the records), unless ROWPROBE_ARGS gives other arguments between the input
# and -o; prints per capture and binary the line count and a digest of the sorted per-line
# hashes.
#
# Usage: scripts/compare-json-flows.sh OLD_BINARY NEW_BINARY CAPTURE...
#   CAPTURE: large | small (scripts/bench-common.sh) or a pcap path.
#   e.g. scripts/compare-json-flows.sh /work/main/build/release/core/rowprobe \
#            build/release/core/rowprobe large small
# Exit status: 0 when every capture's outputs are the same lines, 1 when one differs, 2 on bad
# usage.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $# -ge 3 ]] || { sed -n 2,18p "$0" >&2; exit 2; }
old=$1 new=$2
shift 2
source scripts/bench-common.sh
year=31536000
read -r -a extra <<< "${ROWPROBE_ARGS:-}"
[[ ${#extra[@]} -gt 0 ]] ||
    extra=(-s "cache;size=20;active=$year;inactive=$year;seed=1" --tunnel outer
           -p 'flowstats;splt=10;accounting=link')
digest() {  # digest < JSON: "LINES DIGEST" of the sorted per-line hashes
    python3 -c '
import hashlib, sys
h = sorted(hashlib.blake2b(line, digest_size=16).digest() for line in sys.stdin.buffer)
print(len(h), hashlib.sha256(b"".join(h)).hexdigest())'
}
status=0
for c in "$@"; do
    f=$(capture "$c")
    a=$("$old" -i "pcap;file=$f" "${extra[@]}" -o 'json;file=/dev/stdout' 2>/dev/null | digest)
    b=$("$new" -i "pcap;file=$f" "${extra[@]}" -o 'json;file=/dev/stdout' 2>/dev/null | digest)
    echo "$c: old $a"
    echo "$c: new $b"
    if [[ $a = "$b" && ${a%% *} != 0 ]]; then echo "$c: identical"; else echo "$c: DIFFERENT"; status=1; fi
done
exit $status
