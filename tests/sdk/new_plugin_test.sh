#!/usr/bin/env bash
# ctest Sdk.NewProcessPlugin (labels sdk, scaffold): scripts/new-process-plugin.sh writes a
# plugin into a scratch tree with rowprobe's layout, and what it writes is a working plugin:
#   * the plugin glue compiles against the SDK headers with the project's warnings as errors
#     (ProcessPluginBase's hook checks included);
#   * the parser's unit test builds and passes;
#   * the fuzz target builds with clang's libFuzzer and runs 5000 inputs (when clang++-14 is
#     installed; otherwise it is only compiled);
#   * every field the plugin declares is in its README's table, and the files are clang-format
#     clean;
#   * a second run for the same NAME, and an invalid NAME, exit with code 2.
# Usage: new_plugin_test.sh SOURCE_DIR CXX GTEST_LIB GTEST_MAIN_LIB
set -euo pipefail
src=$1 cxx=$2 gtest=$3 gtest_main=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

mkdir -p "$tmp/process" "$tmp/tests/unit/process" "$tmp/tests/fuzz"
cp "$src/.clang-format" "$tmp/"
"$src/scripts/new-process-plugin.sh" --root "$tmp" scaffoldcheck
p=$tmp/process/scaffoldcheck
for f in "$p/CMakeLists.txt" "$p/README.md" "$p/scaffoldcheck_parser.hpp" "$p/scaffoldcheck_parser.cpp" \
    "$p/scaffoldcheck_plugin.cpp" "$tmp/tests/unit/process/scaffoldcheck_parser_test.cpp" \
    "$tmp/tests/fuzz/scaffoldcheck_parser_fuzz.cpp" "$tmp/tests/fuzz/corpus/scaffoldcheck_parser_fuzz/seed1"; do
    [[ -s $f ]] || fail "missing $f"
done

warn=(-std=c++20 -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
    -Wno-missing-field-initializers -Werror)
cd "$tmp"
"$cxx" "${warn[@]}" -I. -I"$src/plugins/include" -c process/scaffoldcheck/scaffoldcheck_plugin.cpp \
    -o plugin.o || fail "the plugin glue does not compile"
"$cxx" "${warn[@]}" -I. process/scaffoldcheck/scaffoldcheck_parser.cpp \
    tests/unit/process/scaffoldcheck_parser_test.cpp "$gtest_main" "$gtest" -pthread -o parser_test ||
    fail "the parser's unit test does not build"
./parser_test --gtest_brief=1 || fail "the parser's unit test fails"
[[ $(./parser_test --gtest_list_tests | grep -c '^  ') -ge 3 ]] || fail "fewer than 3 parser tests"

if command -v clang++-14 >/dev/null; then
    clang++-14 -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -I. \
        tests/fuzz/scaffoldcheck_parser_fuzz.cpp process/scaffoldcheck/scaffoldcheck_parser.cpp \
        -o fuzz || fail "the fuzz target does not build"
    ./fuzz -runs=5000 -max_len=256 tests/fuzz/corpus/scaffoldcheck_parser_fuzz >fuzz.log 2>&1 ||
        { cat fuzz.log; fail "the fuzz target fails"; }
else
    "$cxx" "${warn[@]}" -I. -fsyntax-only tests/fuzz/scaffoldcheck_parser_fuzz.cpp ||
        fail "the fuzz target does not compile"
fi

fields=$(grep -o '\.name = "scaffoldcheck_[a-z0-9_]*"' "$p/scaffoldcheck_plugin.cpp" | cut -d'"' -f2)
[[ -n $fields ]] || fail "no fields found in the plugin glue"
for field in $fields; do
    grep -q "^| \`$field\` |" "$p/README.md" || fail "field $field is not in README.md's table"
done
if command -v clang-format >/dev/null; then
    clang-format --dry-run --Werror "$p"/*.cpp "$p"/*.hpp tests/unit/process/*.cpp tests/fuzz/*.cpp ||
        fail "generated files are not clang-format clean"
fi

set +e
"$src/scripts/new-process-plugin.sh" --root "$tmp" scaffoldcheck 2>/dev/null
[[ $? -eq 2 ]] || fail "an existing NAME must exit 2"
"$src/scripts/new-process-plugin.sh" --root "$tmp" Bad-Name 2>/dev/null
[[ $? -eq 2 ]] || fail "an invalid NAME must exit 2"
"$src/scripts/new-process-plugin.sh" --root "$tmp" class 2>/dev/null
[[ $? -eq 2 ]] || fail "a C++ keyword must exit 2"
echo "new-process-plugin.sh: plugin compiles, its tests pass, errors exit 2"
