#!/usr/bin/env bash
# Checks formatting (clang-format) and naming/bug-prone patterns (clang-tidy, .clang-tidy) of
# every C++ source in the tree. clang-tidy needs a configured build directory for
# compile_commands.json.
# Usage: scripts/lint.sh [BUILD_DIR]   (default build/release)
#        --fix-format    rewrite files instead of checking them
#        --format-only   skip clang-tidy (ctest's Style.ClangFormatClean runs this; exit 77 =
#                        skipped when clang-format or the git checkout is missing)
set -euo pipefail
cd "$(dirname "$0")/.."
build=build/release
fix=0
tidy=1
for a in "$@"; do
    case $a in
        --fix-format) fix=1 ;;
        --format-only) tidy=0 ;;
        *) build=$a ;;
    esac
done
if ! command -v clang-format >/dev/null || ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    echo "lint: clang-format or a git checkout is missing" >&2
    exit 77
fi
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' | grep -v '^docs/examples/')
status=0
if [[ $fix -eq 1 ]]; then
    clang-format -i "${files[@]}"
else
    clang-format --dry-run --Werror "${files[@]}" || status=1
fi
if [[ $tidy -eq 1 ]]; then
    mapfile -t units < <(printf '%s\n' "${files[@]}" | grep '\.cpp$' | grep -v '^tests/')
    printf '%s\n' "${units[@]}" | xargs -P "$(nproc)" -n 4 clang-tidy -p "$build" --quiet --extra-arg=-Wno-unknown-warning-option || status=1
fi
exit $status
