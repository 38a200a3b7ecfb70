#!/usr/bin/env bash
# Rebuild what you edited and grade it, in one command (build/bin/grade alone would grade the
# answers compiled into it, and refuses when an exercise file is newer than it):
#
#   scripts/grade.sh          every lesson's exercises
#   scripts/grade.sh 04 06    lessons 04 and 06
#
# ATTNLAB_BUILD names another build folder (default build/, made by scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${ATTNLAB_BUILD:-build}
if [ ! -f "$build/CMakeCache.txt" ]; then
  echo "grade: no build in $build/: run scripts/setup.sh first (it installs what is missing and builds)" >&2
  exit 2
fi
cmake --build "$build" --target grade -j "$(nproc 2>/dev/null || echo 2)" > "$build/grade_build.log" 2>&1 || {
  echo "grade: your exercises do not compile; the compiler says:" >&2
  grep -E "error|note: " "$build/grade_build.log" | head -30 >&2
  exit 1
}
exec "$build/bin/grade" "$@"
