#!/usr/bin/env bash
# Shows that the regression test of an issue 21 item fails on the code before its fix: checks out
# the fix commit's parent in a scratch worktree (build/prove/src), builds what the test needs
# there and runs the test. docs/regression-tests.md lists the items, their fixes and what the
# tests printed.
#
# Usage: scripts/prove-regression.sh [--after] [--remove] ITEM...
#   ITEM      1-15, 16a (tunnel_src of plain IPv4 flows), 16b (huge config lines),
#             16c (UniRec sockets of the systemd unit), or 'all'
#   --after   also run the test on the fix commit itself (it must pass there)
#   --remove  remove the scratch worktree and its build at the end
# Two kinds of test:
#   bin   the test drives the rowprobe binary: rowprobe is built from the fix's parent and the
#         current tree's test binary (build/release/tests/..., built first if missing) is run
#         against it with ROWPROBE_BINARY / ROWPROBE_FAULTS_BINARY, so today's test is checked
#   unit  the test links the code: the fix's parent gets the test files as the fix committed
#         them, and the test binary is built there
# Environment: BUILD (the current tree's build, default build/release), PROVE_DIR (default
# build/prove), JOBS (default 2).
# Exit status: 0 when every test failed before its fix (and passed after it with --after),
# 1 otherwise, 2 on bad usage.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build/release}
prove=${PROVE_DIR:-$root/build/prove}
jobs=${JOBS:-2}
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(dirname "$root")} CCACHE_NOHASHDIR=true

# item -> "kind|fix commit|test binary|gtest filter|test files (unit kind)|commit to take them
# from (default: the fix)"
declare -A items=(
    [1]="bin|b4bc5e1|groundtruth|Issue21Fields.DnsCutInsideARecord*|"
    [2]="bin|b4bc5e1|groundtruth|Issue21Fields.NoDuplicateKeys*|"
    [3]="bin|b4bc5e1|groundtruth|Issue21Fields.CookedSrcMac*|"
    [4]="bin|b4bc5e1|groundtruth|Issue21Fields.GreIpfixprobeMode*|"
    [5]="bin|b4bc5e1|groundtruth|Issue21Fields.HttpSplitRequest*|"
    [6]="bin|b4bc5e1|groundtruth|Issue21Fields.SynAckAfterFin*|"
    [7]="bin|b4bc5e1|groundtruth|Issue21Fields.Ja4Ipfixprobe*|"
    [8]="bin|7361a2b|faults|DiskFaults.*CountsExactlyTheCompleteRecordsOnAFullDisk|"
    [9]="bin|644824f|e2e|Metrics.SlowClientsDoNotHoldUpAScrape:Metrics.ManyIdleConnectionsDoNotHoldUpAScrape:Metrics.EveryAddressMeansIpv6AndIpv4:Metrics.APortInUseIsAConfigurationError|"
    [10]="unit|166d2f2|core|CommandLine.AHashInsideAConfigValueIsPartOfTheValue|tests/unit/core/cli_test.cpp"
    [11]="bin|d657106|faults|StartupFaults.KafkaConfRefusesWhatRunsCodeAndMasksSecrets|"
    [12]="unit|aa0b099|plugins|ParserTunnel.UdpTunnelsOpenOnTheDestinationPortOnly:ParserTunnel.TeredoOpensOnlyWithPort3544OnOneSide|tests/unit/plugins/parser_test.cpp"
    [13]="unit|03bd6c9|storage|PolicyLibrary.AnEntrySymbolThatIsDataIsRefused:PolicyLibrary.ADescriptorEndingAtAnUnmappedPageIsRefused:PolicyLibrary.AWorldWritableLibraryOrDirectoryIsRefused|tests/unit/storage/policy_options_and_library_test.cpp tests/unit/storage/policy_bad_entry_lib.cpp docs/examples/CMakeLists.txt"
    [14]="bin|166d2f2|e2e|Sighup.AFailingReopenIsLoggedOnce|"
    [15]="unit|a62a1cc|storage|ExpiryThread.FlushAllReturnsWithTheRacingScanAlreadyCounted|tests/unit/storage/expiry_thread_test.cpp"
    [16a]="unit|aa0b099|output|JsonOutput.Ipv4RecordHasEveryDocumentedFieldWithItsValue|tests/unit/output/json_output_test.cpp"
    [16b]="unit|166d2f2|core|CommandLine.AHugeConfigLineIsRefusedWithAShortMessage:CommandLine.AnErrorInAHugePluginStringShowsAWindow|tests/unit/core/cli_test.cpp"
    [16c]="unit|489c54d|output|UnirecServiceUnit.PutsUnixSocketsWhereModulesOutsideTheServiceSeeThem|tests/unit/output/unirec_trap_test.cpp|1594b60"
)
# The order in which `all` runs them: by fix commit, so each build is incremental.
all_items=(1 2 3 4 5 6 7 15 8 10 14 16b 12 16a 11 9 13 16c)

usage() { sed -n '7,21p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
after=0 remove=0 want=()
while [[ $# -gt 0 ]]; do
    case $1 in
        --after) after=1; shift ;;
        --remove) remove=1; shift ;;
        -h|--help) usage ;;
        all) want+=("${all_items[@]}"); shift ;;
        -*) echo "prove-regression: unknown option '$1'" >&2; usage ;;
        *) [[ -n ${items[$1]:-} ]] || { echo "prove-regression: no item '$1' (1-15, 16a, 16b, 16c, all)" >&2; exit 2; }
           want+=("$1"); shift ;;
    esac
done
[[ ${#want[@]} -gt 0 ]] || usage

src=$prove/src
obuild=$src/build/release
if [[ ! -e $src/.git ]]; then
    mkdir -p "$prove"
    git -C "$root" worktree add -q --detach "$src" HEAD
fi
configured=0
# checkout REV [FILES-FROM FILES...]: the scratch tree at REV, the given files taken from FILES-FROM.
checkout() {
    git -C "$src" checkout -q -f --detach "$1"
    git -C "$src" clean -q -fd
    if [[ $# -gt 2 ]]; then git -C "$src" checkout -q "$2" -- "${@:3}"; fi
    if [[ $configured = 0 ]]; then
        cmake -S "$src" -B "$obuild" -G Ninja -DCMAKE_BUILD_TYPE=Release -DROWPROBE_WERROR=ON \
            -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache >/dev/null
        configured=1
    fi
}
# The test binary of the current tree, brought up to date (configured as the README says when
# the build directory is new).
current_test() {
    if [[ ! -f $build/build.ninja ]]; then
        cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DROWPROBE_WERROR=ON \
            -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache >/dev/null
    fi
    ninja -C "$build" -j"$jobs" "tests/test_$1" >/dev/null
    printf '%s\n' "$build/tests/test_$1"
}

# run KIND BINARY FILTER: runs each test of the filter in a process of its own (a crash in one
# does not hide the others) on the scratch tree's build; fails when any test failed.
run() {
    local kind=$1 bin=$2 filter=$3 exe tests t rc=0 suite=""
    if [[ $kind = bin ]]; then exe=$(current_test "$bin"); else exe=$obuild/tests/test_$bin; fi
    export ROWPROBE_BINARY=$obuild/core/rowprobe ROWPROBE_FAULTS_BINARY=$obuild/core/rowprobe
    [[ $kind = bin ]] || unset ROWPROBE_BINARY ROWPROBE_FAULTS_BINARY
    tests=()
    while IFS= read -r t; do
        if [[ $t =~ ^([A-Za-z0-9_/]+)\.$ ]]; then suite=${BASH_REMATCH[1]}
        elif [[ $t =~ ^\ \ ([A-Za-z0-9_/]+) ]]; then tests+=("$suite.${BASH_REMATCH[1]}"); fi
    done < <("$exe" --gtest_list_tests --gtest_filter="$filter")
    [[ ${#tests[@]} -gt 0 ]] || { echo "no test matches $filter"; return 1; }
    local out st
    for t in "${tests[@]}"; do
        st=0
        out=$("$exe" --gtest_filter="$t" --gtest_color=no 2>&1) || st=$?
        printf '%s\n' "$out"
        [[ $st = 0 ]] && continue
        rc=1
        if ! grep -q "^\[  FAILED  \] $t (" <<<"$out"; then
            if [[ $st -gt 128 ]]; then
                echo "[  FAILED  ] $t (the process died: signal $((st - 128)), $(kill -l $((st - 128))))"
            else
                echo "[  FAILED  ] $t (the process exited $st)"
            fi
        fi
    done
    unset ROWPROBE_BINARY ROWPROBE_FAULTS_BINARY
    return $rc
}

status=0
for item in "${want[@]}"; do
    IFS='|' read -r kind fix bin filter files from <<<"${items[$item]}"
    read -ra files <<<"$files"
    log=$prove/item-$item.log
    echo "== item $item: fix $fix, test $filter ($kind)"
    for side in before after; do
        [[ $side = after && $after = 0 ]] && continue
        rev=$fix^
        [[ $side = after ]] && rev=$fix
        # Before the fix: the fix's test files (or the later commit that corrected them, also
        # used after the fix).
        if [[ $kind = unit && ($side = before || -n $from) ]]; then
            checkout "$rev" "${from:-$fix}" "${files[@]}"
        else
            checkout "$rev"
        fi
        target=core/rowprobe
        [[ $kind = unit ]] && target=tests/test_$bin
        if ! ninja -C "$obuild" -j"$jobs" "$target" >"$log.build" 2>&1; then
            echo "   $side ($(git -C "$src" rev-parse --short HEAD)): the test does not build:"
            grep -m3 'error' "$log.build" | sed 's/^/     /'
            [[ $side = before ]] || status=1
            continue
        fi
        if run "$kind" "$bin" "$filter" >"$log.$side" 2>&1; then
            echo "   $side ($(git -C "$src" rev-parse --short HEAD)): PASSED"
            [[ $side = before ]] && status=1
        else
            echo "   $side ($(git -C "$src" rev-parse --short HEAD)): FAILED"
            [[ $side = after ]] && status=1
        fi
        # What failed: gtest's "file:line: Failure" and the lines after it, a crash, and the
        # verdict of each test.
        grep -A4 -E ': Failure$' "$log.$side" | grep -v -E '^--$' | cut -c1-200 | head -15 |
            sed 's/^/     /' || true
        grep -E '^\[ +(OK|FAILED|SKIPPED) +\] [A-Za-z0-9_]+\.[A-Za-z0-9_/]+ \(' "$log.$side" |
            sed 's/^/     /' || true
    done
done
if [[ $remove = 1 ]]; then
    git -C "$root" worktree remove --force "$src"
    rm -rf "$prove"
fi
exit $status
