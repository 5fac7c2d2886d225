#!/bin/sh
# A stand-in for ipfixprobe in the migration-check test: takes ipfixprobe's arguments and prints
# the ipfixprobe reference output (NEMEA logger CSV) of the plugin named by the first -p, from
# $FAKE_IPFIXPROBE_OUTPUTS. With FAKE_IPFIXPROBE_DROP=N it leaves out record N (1-based), to
# show a flow that exists on one side only.
p=""
while [ $# -gt 0 ]; do
    case $1 in
        -p) [ -z "$p" ] && p=$2; shift 2 ;;
        *) shift ;;
    esac
done
if [ -n "${FAKE_IPFIXPROBE_DROP:-}" ]; then
    sed "${FAKE_IPFIXPROBE_DROP}d" "$FAKE_IPFIXPROBE_OUTPUTS/$p"
else
    cat "$FAKE_IPFIXPROBE_OUTPUTS/$p"
fi
