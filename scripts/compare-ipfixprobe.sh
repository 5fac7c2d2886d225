#!/usr/bin/env bash
# The operators' migration check: runs one capture through rowprobe and through an ipfixprobe
# binary with the same process plugins, joins the flows (5-tuple + start time) and prints, per
# plugin and field, how many agree, differ or exist on one side only, then the first differing
# flows. docs/migrating-from-ipfixprobe.md explains how to read it.
#
# Usage: scripts/compare-ipfixprobe.sh [options] CAPTURE IPFIXPROBE -p PLUGIN [-p PLUGIN ...]
#   -p PLUGIN        a process plugin for both probes (repeatable; `basic` compares only the
#                    basic flow fields)
#   -r 'NAME;opt=v'  rowprobe's plugin string for NAME instead of plain NAME (e.g.
#                    -r 'ntp;format=ipfixprobe' to compare byte for byte)
#   --rowprobe BIN   rowprobe binary (default: build/release/core/rowprobe, else PATH)
#   --logger BIN     NEMEA's logger, which turns ipfixprobe's UniRec file into CSV
#                    (default: /usr/bin/nemea/logger, else nemea-logger in PATH)
#   --show N         differing flows to print (default 5)
#   --keep           keep the work directory (both outputs)
# IPFIXPROBE is run as
#   IPFIXPROBE -i 'pcap;file=CAPTURE' -p P... -o 'unirec;i=f:WORK/ipfixprobe.trapcap:buffer=off;p=(P,...)'
# and its file read with `logger -t`. A program that prints logger's CSV on its standard output
# instead (for example a wrapper that ran ipfixprobe elsewhere) works as well.
# Exit status: 0 when every compared field agrees, 1 when something differs, 2 on bad usage or
# when a probe fails.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
usage() { sed -n '6,18p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

plugins=() overrides=() show=5 keep=0 rowprobe="" logger=""
positional=()
while [[ $# -gt 0 ]]; do
    case $1 in
        -p) [[ $# -ge 2 ]] || usage; plugins+=("$2"); shift 2 ;;
        -r) [[ $# -ge 2 ]] || usage; overrides+=("$2"); shift 2 ;;
        --rowprobe) [[ $# -ge 2 ]] || usage; rowprobe=$2; shift 2 ;;
        --logger) [[ $# -ge 2 ]] || usage; logger=$2; shift 2 ;;
        --show) [[ $# -ge 2 ]] || usage; show=$2; shift 2 ;;
        --keep) keep=1; shift ;;
        -h|--help) usage ;;
        -*) echo "compare-ipfixprobe: unknown option '$1'" >&2; usage ;;
        *) positional+=("$1"); shift ;;
    esac
done
[[ ${#positional[@]} -eq 2 && ${#plugins[@]} -ge 1 ]] || usage
capture=${positional[0]} ipfixprobe=${positional[1]}
[[ -r $capture ]] || { echo "compare-ipfixprobe: cannot read capture '$capture'" >&2; exit 2; }
if [[ -z $rowprobe ]]; then
    if [[ -x $here/../build/release/core/rowprobe ]]; then
        rowprobe=$here/../build/release/core/rowprobe
    else
        rowprobe=$(command -v rowprobe || true)
    fi
fi
[[ -n $rowprobe && -x $rowprobe ]] || { echo "compare-ipfixprobe: no rowprobe binary (--rowprobe)" >&2; exit 2; }
if [[ -z $logger ]]; then
    if [[ -x /usr/bin/nemea/logger ]]; then logger=/usr/bin/nemea/logger
    else logger=$(command -v nemea-logger || true); fi
fi

work=$(mktemp -d /tmp/compare-ipfixprobe.XXXXXX)
trap '[[ $keep = 1 ]] && echo "outputs kept in $work" >&2 || rm -rf "$work"' EXIT

# The same plugins on both sides; rowprobe's strings may be overridden per plugin.
ipf_args=() rp_args=() group="" names=()
for p in "${plugins[@]}"; do
    [[ $p = basic ]] && continue
    names+=("$p")
    ipf_args+=(-p "$p")
    rp=$p
    for o in "${overrides[@]}"; do [[ ${o%%;*} = "$p" ]] && rp=$o; done
    rp_args+=(-p "$rp")
    group+=${group:+,}$p
done
ifc="unirec;i=f:$work/ipfixprobe.trapcap:buffer=off"
[[ -n $group ]] && ifc+=";p=($group)"

if ! "$ipfixprobe" -i "pcap;file=$capture" "${ipf_args[@]}" -o "$ifc" \
        > "$work/ipfixprobe.stdout" 2> "$work/ipfixprobe.stderr"; then
    echo "compare-ipfixprobe: $ipfixprobe failed:" >&2
    cat "$work/ipfixprobe.stderr" >&2
    exit 2
fi
if [[ -s $work/ipfixprobe.trapcap ]] || compgen -G "$work/ipfixprobe.trapcap*" > /dev/null; then
    [[ -n $logger ]] || { echo "compare-ipfixprobe: NEMEA's logger is needed to read ipfixprobe's UniRec output (--logger)" >&2; exit 2; }
    f=$(compgen -G "$work/ipfixprobe.trapcap*" | head -1)
    "$logger" -i "f:$f" -t > "$work/ipfixprobe.csv"
else
    cp "$work/ipfixprobe.stdout" "$work/ipfixprobe.csv"
fi

if ! "$rowprobe" -i "pcap;file=$capture" "${rp_args[@]}" -o "json;file=$work/rowprobe.json" \
        2> "$work/rowprobe.stderr"; then
    echo "compare-ipfixprobe: $rowprobe failed:" >&2
    cat "$work/rowprobe.stderr" >&2
    exit 2
fi
# Each plugin's fields (JSON key <-> UniRec name) as rowprobe documents them.
for n in "${names[@]}"; do
    "$rowprobe" -h "$n" > "$work/fields.$n.txt"
done

python3 "$here/compare_ipfixprobe.py" --show "$show" --csv "$work/ipfixprobe.csv" \
    --json "$work/rowprobe.json" --fields-dir "$work" ${names[@]+"${names[@]}"}
