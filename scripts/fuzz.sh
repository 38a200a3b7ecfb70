#!/usr/bin/env bash
# Fuzz the file readers with libFuzzer (fuzz/): install clang and its libFuzzer runtime when
# missing, configure and build build-fuzz/ (clang, AddressSanitizer + UBSan, only the libraries
# the harnesses link), then run every harness from its seeds and print its executions.
#
#   scripts/fuzz.sh [SECONDS]   each harness for SECONDS (default 60, or ATTNLAB_FUZZ_SECONDS),
#                               as many at once as there are cores
#   scripts/fuzz.sh --ctest     the fuzz build's ctest tests instead (each harness for the
#                               configured ATTNLAB_FUZZ_SECONDS, 20 s): what scripts/test.sh runs
#
# The other build packages (xtensor, zlib, ...) are scripts/setup.sh's. A crash, a leak, a UBSan
# report or a broken promise stops that harness and saves its input under build-fuzz/fuzz/artifacts/;
# the script then exits non-zero. Replay one input: build-fuzz/bin/fuzz_<reader> <file>.
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian 12: clang-14 itself does not bring the sanitizer and libFuzzer runtimes
# (libclang_rt.fuzzer-x86_64.a is in libclang-rt-14-dev).
packages=(clang libclang-rt-14-dev)
source scripts/apt_install.sh
install_missing fuzz "${packages[@]}"

build=build-fuzz
jobs=$(nproc 2>/dev/null || echo 2)
# -O1 -g1 as the sanitizer build: quick to compile, and stack traces keep file:line.
[ -f "$build/CMakeCache.txt" ] ||
  CC=clang CXX=clang++ cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" -DATTNLAB_FUZZ=ON -DATTNLAB_TESTS=OFF \
    -DATTNLAB_LESSONS=OFF -DATTNLAB_BENCH=OFF -DATTNLAB_INSTALL=OFF -DATTNLAB_PCH=OFF >/dev/null
cmake --build "$build" -j "$jobs" --target fuzz_all

readers=(npy npz idx checkpoint fortunes pgm)  # as fuzz/CMakeLists.txt builds them
# One line per harness from libFuzzer's final statistics in its log.
report() {  # report <reader> <log> <status>
  awk -v r="$1" -v s="$3" '/stat::number_of_executed_units/ {n = $2} /stat::average_exec_per_sec/ {e = $2}
    END {printf "%-11s %12s executions %8s exec/s   %s\n", r, n ? n : "?", e ? e : "?", s}' "$2"
}

if [ "${1:-}" = "--ctest" ]; then
  status=0
  (cd "$build" && ctest --output-on-failure -j "$jobs" -L fuzz) || status=$?
  # ctest keeps each test's whole output; its statistics tell how much each harness ran.
  log="$build/Testing/Temporary/LastTest.log"
  for r in "${readers[@]}"; do
    awk -v t="fuzz_$r" '$0 ~ "Test: " t "$" {on = 1} on && /^"?Test time/ {exit} on' "$log" > "$build/fuzz/$r.log"
    report "$r" "$build/fuzz/$r.log" "(ctest)"
  done
  exit "$status"
fi

seconds=${1:-${ATTNLAB_FUZZ_SECONDS:-60}}
echo "fuzz: each harness for $seconds s, $jobs at a time; logs in $build/fuzz/<reader>.log"
run() {  # run <reader>: its exit status in <reader>.rc
  local r=$1 rc=0
  "$build/bin/fuzz_$r" -max_total_time="$seconds" -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$build/fuzz/artifacts/$r-" "$build/fuzz/corpus/$r" "fuzz/corpus/$r" \
    > "$build/fuzz/$r.log" 2>&1 || rc=$?
  echo "$rc" > "$build/fuzz/$r.rc"
}
for r in "${readers[@]}"; do
  run "$r" &
  while (($(jobs -rp | wc -l) >= jobs)); do wait -n || true; done
done
wait
failed=0
for r in "${readers[@]}"; do
  rc=$(cat "$build/fuzz/$r.rc")
  if [ "$rc" = 0 ]; then report "$r" "$build/fuzz/$r.log" ok
  else report "$r" "$build/fuzz/$r.log" "FAILED (exit $rc): see $build/fuzz/$r.log"; failed=1; fi
done
exit "$failed"
