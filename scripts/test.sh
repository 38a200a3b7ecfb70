#!/usr/bin/env bash
# Set up, build, and run the whole test suite: the Release build, then the sanitizer build
# (AddressSanitizer + UBSan; tests labelled no_sanitize, the timing-heavy lesson runs, are skipped there). Set ATTNLAB_SKIP_SANITIZE=1 to run only the Release tests.
# Then the file readers are fuzzed (scripts/fuzz.sh --ctest: a clang build in build-fuzz/, each
# libFuzzer harness for 20 s); ATTNLAB_SKIP_FUZZ=1 skips that stage.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)

scripts/setup.sh --tests
(cd build && ctest --output-on-failure -j "$jobs")

if [ "${ATTNLAB_SKIP_SANITIZE:-0}" != "1" ]; then
  scripts/setup.sh --tests --sanitize
  (cd build-sanitize && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
     ctest --output-on-failure -j "$jobs" -LE no_sanitize)
fi

if [ "${ATTNLAB_SKIP_FUZZ:-0}" != "1" ]; then
  scripts/fuzz.sh --ctest
fi
