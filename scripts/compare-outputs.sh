#!/usr/bin/env bash
# Byte-for-byte comparison of two rowprobe binaries' text and json outputs, for changes to the
# formatting code that must not change a byte (issue 11: tools/bench_format, docs/performance.md).
# Runs both on every capture in pcaps/ and, when present, the shared third-party captures
# (../shared/testdata: ndpi-4.2, ipfixprobe inputs, bench), with the default fields, every
# process plugin, every text precision, `narrow`, explicit field lists and --tunnel both, and
# reports each output file that differs. Nothing is kept unless -k.
# IPFIX files (the plugins above and flowstats under a PEN, biflow and uniflow) are compared as
# the sorted records libfixbuf's ipfixDump decodes, one line each, without the message headers
# (export time, length, sequence) and record numbers, templates and RFC 5610 type records once
# each: where a message ends, and so the order of records of different templates and how often
# templates are sent, depends on when the export thread drained its ring. Left out when
# ipfixDump (libfixbuf-tools) is not installed.
#
# Usage: scripts/compare-outputs.sh [-k] OLD_BINARY NEW_BINARY [EXTRA_CAPTURE...]
#   e.g. scripts/compare-outputs.sh /tmp/rowprobe-before build/release/core/rowprobe \
#            /dev/shm/rowprobe-peers-bench/large.pcap
# Exit status: 0 when every output is identical, 1 when one differs, 2 on bad usage.
set -euo pipefail
cd "$(dirname "$0")/.."
keep=0
if [[ ${1:-} = -k ]]; then keep=1; shift; fi
[[ $# -ge 2 ]] || { echo "usage: $0 [-k] OLD_BINARY NEW_BINARY [EXTRA_CAPTURE...]" >&2; exit 2; }
old=$1 new=$2
shift 2
work=$(mktemp -d /tmp/rowprobe-compare.XXXXXX)
trap '[[ $keep = 1 ]] && echo "outputs kept in $work" || rm -rf "$work"' EXIT
testdata=../shared/testdata
plugins=(-p pstats -p http -p tls -p dns -p passivedns -p idpcontent -p bstats -p phists
         -p basicplus -p conn -p tcpperf)
all=src_ip,src_port,dst_ip,dst_port,src_mac,dst_mac,time_first,time_last,proto,packets,bytes
all=$all,tcp_flags,tcp_flags_rev,end_reason,vlan,ttl,icmp_type_code,queue
captures=(pcaps/*.pcap)
for d in ndpi-4.2/pcap ipfixprobe/inputs bench; do
    [[ -d $testdata/$d ]] && captures+=("$testdata/$d"/*.pcap)
done
captures+=("$@")

run() {  # run BINARY OUTDIR NAME CAPTURE
    local bin=$1 out=$2 n=$3 f=$4
    mkdir -p "$out"
    local in=(-i "pcap;file=$f" -s 'cache;seed=1' -Q)
    "$bin" "${in[@]}" -o "json;file=$out/$n.json"
    "$bin" "${in[@]}" "${plugins[@]}" -o "json;file=$out/$n.plugins.json"
    "$bin" "${in[@]}" -o "json;file=$out/$n.fields.json;fields=$all,ip_version"
    "$bin" "${in[@]}" -o "text;file=$out/$n.txt"
    "$bin" "${in[@]}" "${plugins[@]}" -o "text;file=$out/$n.plugins.txt;precision=ns"
    "$bin" "${in[@]}" -o "text;file=$out/$n.fields.txt;precision=s;narrow;fields=$all"
    "$bin" "${in[@]}" -o "text;file=$out/$n.ms.txt;precision=ms;fields=dst_ip,src_ip,time_last"
    "$bin" "${in[@]}" -p 'flowstats;splt=10' -o "json;file=$out/$n.flowstats.json"
    "$bin" "${in[@]}" --tunnel both -o "json;file=$out/$n.tunnels.json"
    "$bin" "${in[@]}" --tunnel both \
        -o "text;file=$out/$n.tunnels.txt;fields=src_ip,dst_ip,tunnel_src,tunnel_dst,tunnel_id"
    if [[ $ipfix = 1 ]]; then
        "$bin" "${in[@]}" "${plugins[@]}" -p 'flowstats;splt=10;pen=32473' \
            -o "ipfix;file=$out/$n.plugins.ipfix"
        "$bin" "${in[@]}" -p 'flowstats;splt=10;pen=32473' \
            -o "ipfix;file=$out/$n.uniflow.ipfix;uniflow"
        for x in "$out/$n".*.ipfix; do
            ipfixDump --rfc5610 --in "$x" | LC_ALL=C awk '
                /^--- Message Header|^export time|^message length|^\*\*\*|^$/ {next}
                function put() {
                    if (r ~ /^--- data record/ && r !~ /informationElementId/) print r
                    else if (r != "") once[r] = 1
                }
                /^--- / {put(); r = $0; sub(/ [0-9]+ ---$/, "", r); next}
                {r = r " | " $0}
                END {put(); for (k in once) print k}' | LC_ALL=C sort > "$x.txt" ||
                echo "ipfixDump could not read $(basename "$x")" >> "$x.txt"
            rm -f "$x"
        done
    fi
}
ipfix=0
command -v ipfixDump >/dev/null && ipfix=1

i=0
for f in "${captures[@]}"; do
    i=$((i + 1))
    n=$i-$(basename "$f" .pcap)
    run "$old" "$work/old" "$n" "$f" 2>/dev/null || true  # (a capture both reject: no output)
    run "$new" "$work/new" "$n" "$f" 2>/dev/null || true
done
files=$(find "$work/old" -type f | wc -l)
bytes=$(du -sh "$work/old" | cut -f1)
if diff -rq "$work/old" "$work/new"; then
    echo "identical: $files output files ($bytes) from ${#captures[@]} captures"
    exit 0
fi
echo "DIFFERENT (above) among $files output files from ${#captures[@]} captures" >&2
exit 1
