#!/usr/bin/env bash
# Fails when a function in storage/cache/ is longer than MAX lines, or flow_table.hpp has 500
# lines or more (issue 20: the flow table stays in parts a reader can hold in their head). clang-tidy's readability-function-size
# counts the lines of each body, comments and blank lines included, over the directory's
# translation units and every header of the directory they include (all of them do).
#
# Usage: scripts/check-function-size.sh [--max N] [BUILD_DIR] [FILE.cpp...]
#        (default: 80 lines, build/release, every storage/cache/*.cpp)
#        scripts/check-function-size.sh --self-test   (the check reports a function of 90
#        lines and passes one of 60: exit 0 when it does)
# Exit 0 clean, 1 with clang-tidy's report of each function over, 77 when clang-tidy or the
# build's compile_commands.json is missing (ctest: skipped).
set -euo pipefail
cd "$(dirname "$0")/.."
max=80
build=build/release
files=()
config() {
    echo "{Checks: '-*,readability-function-size', HeaderFilterRegex: 'storage/cache/.*',
  CheckOptions: [{key: readability-function-size.LineThreshold, value: $1}]}"
}
while [ $# -gt 0 ]; do
    case $1 in
        --self-test)
            command -v clang-tidy >/dev/null || exit 77
            dir=$(mktemp -d)
            trap 'rm -rf "$dir"' EXIT
            for n in 90 60; do
                { echo "int f$n(int x) {"; for _ in $(seq 3 "$n"); do echo "    x = x * 3 + 1;"; done
                  echo "    return x;"; echo "}"; } >"$dir/f$n.cpp"
            done
            out=$(clang-tidy --quiet --config="$(config "$max")" "$dir/f90.cpp" "$dir/f60.cpp" \
                -- -std=c++20 2>&1 || true)
            if grep -q "function 'f90' exceeds" <<<"$out" && ! grep -q "'f60'" <<<"$out"; then
                echo "self-test: a 90-line function reported, a 60-line one not"
                exit 0
            fi
            echo "self-test failed:"
            echo "$out"
            exit 1
            ;;
        --max) max=$2; shift ;;
        *.cpp) files+=("$1") ;;
        *) build=$1 ;;
    esac
    shift
done
if ! command -v clang-tidy >/dev/null || [ ! -f "$build/compile_commands.json" ]; then
    echo "check-function-size: clang-tidy or $build/compile_commands.json is missing" >&2
    exit 77
fi
[ ${#files[@]} -gt 0 ] || mapfile -t files < <(ls storage/cache/*.cpp)
# A unit that does not parse is a failure, not a clean result.
if ! out=$(clang-tidy -p "$build" --quiet --config="$(config "$max")" \
    --extra-arg=-Wno-unknown-warning-option "${files[@]}" 2>&1); then
    echo "$out" | grep -E 'error:' | head -20
    echo "check-function-size: clang-tidy failed" >&2
    exit 1
fi
report=$(echo "$out" | grep -E 'warning: function|note: [0-9]+ lines' | sort -u || true)
table=$(wc -l <storage/cache/flow_table.hpp)
if [ "$table" -ge 500 ]; then
    report+=$'\n'"storage/cache/flow_table.hpp has $table lines (at most 499)"
fi
if [ -n "$report" ]; then
    echo "over the limits (functions of $max lines, flow_table.hpp of 500):"
    echo "$report"
    exit 1
fi
echo "no function in storage/cache/ over $max lines (${#files[@]} translation units);" \
    "flow_table.hpp: $table lines"
