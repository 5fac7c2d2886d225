#!/usr/bin/env bash
# scripts/compare-ipfixprobe.sh end to end with a fake ipfixprobe that prints ipfixprobe 5.7's
# reference outputs (tests/scripts/fake-ipfixprobe.sh): the join, the per-field counts, the
# one-side-only flows and the exit status. Skips (77) without the shared test data.
# Usage: compare_ipfixprobe_test.sh ROWPROBE_BINARY TESTDATA_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
rowprobe=$1 testdata=$2
inputs=$testdata/ipfixprobe/inputs
export FAKE_IPFIXPROBE_OUTPUTS=$testdata/ipfixprobe/outputs
[[ -d $inputs && -d $FAKE_IPFIXPROBE_OUTPUTS ]] || { echo "no ipfixprobe test data: skipped"; exit 77; }
compare=$here/../../scripts/compare-ipfixprobe.sh
fake=$here/fake-ipfixprobe.sh
fail() { echo "FAIL: $*"; echo "$out"; exit 1; }

# Every field of every flow agrees: exit 0.
for c in "rtsp.pcap rtsp" "vlan.pcap vlan" "mixed.pcap nettisa" "http.pcap http" "dns.pcap dns"; do
    set -- $c
    out=$("$compare" --rowprobe "$rowprobe" "$inputs/$1" "$fake" -p "$2") || fail "$2 should agree"
    grep -q "result: every field agrees" <<< "$out" || fail "$2: no agreement line"
done

# ntp in its default (RFC) form: delay and dispersion differ on all 56 flows, exit 1; with
# ipfixprobe's format everything agrees.
set +e
out=$("$compare" --rowprobe "$rowprobe" "$inputs/ntp.pcap" "$fake" -p ntp --show 1)
rc=$?
set -e
[[ $rc = 1 ]] || fail "ntp rfc: exit $rc, want 1"
grep -Eq "^ntp +NTP_DELAY +ntp_delay +0 +56 +0$" <<< "$out" || fail "ntp rfc: NTP_DELAY counts"
grep -Eq "^ntp +NTP_STRATUM +ntp_stratum +56 +0 +0$" <<< "$out" || fail "ntp rfc: NTP_STRATUM counts"
grep -q "^differs: " <<< "$out" || fail "ntp rfc: no differing flow shown"
grep -q "NTP_DELAY: ipfixprobe '9' rowprobe " <<< "$out" || fail "ntp rfc: no field detail"
out=$("$compare" --rowprobe "$rowprobe" "$inputs/ntp.pcap" "$fake" -p ntp -r 'ntp;format=ipfixprobe') \
    || fail "ntp ipfixprobe format should agree"

# A record missing on ipfixprobe's side: one flow only in rowprobe, exit 1.
set +e
out=$(FAKE_IPFIXPROBE_DROP=2 "$compare" --rowprobe "$rowprobe" "$inputs/rtsp.pcap" "$fake" -p rtsp)
rc=$?
set -e
[[ $rc = 1 ]] || fail "dropped record: exit $rc, want 1"
grep -q "joined 2, only ipfixprobe 0, only rowprobe 1" <<< "$out" || fail "dropped record: counts"
grep -q "^only in rowprobe: " <<< "$out" || fail "dropped record: flow not listed"

# Bad usage: exit 2.
set +e
"$compare" --rowprobe "$rowprobe" "$inputs/rtsp.pcap" "$fake" > /dev/null 2>&1
rc=$?
set -e
[[ $rc = 2 ]] || { out=""; fail "no -p: exit $rc, want 2"; }
echo "compare-ipfixprobe: all checks passed"
