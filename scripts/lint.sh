#!/usr/bin/env bash
# Checks formatting (clang-format) and naming/bug-prone patterns (clang-tidy, .clang-tidy) of
# every C++ source in the tree. Needs a configured build directory for compile_commands.json.
# Usage: scripts/lint.sh [BUILD_DIR]   (default build/release)   --fix-format to rewrite files
set -euo pipefail
cd "$(dirname "$0")/.."
build=build/release
fix=0
for a in "$@"; do
    case $a in
        --fix-format) fix=1 ;;
        *) build=$a ;;
    esac
done
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' | grep -v '^docs/examples/')
status=0
if [[ $fix -eq 1 ]]; then
    clang-format -i "${files[@]}"
else
    clang-format --dry-run --Werror "${files[@]}" || status=1
fi
mapfile -t units < <(printf '%s\n' "${files[@]}" | grep '\.cpp$' | grep -v '^tests/')
printf '%s\n' "${units[@]}" | xargs -P "$(nproc)" -n 4 clang-tidy -p "$build" --quiet || status=1
exit $status
