#!/usr/bin/env bash
# Runs one lesson over several seeds, one after another (--jobs N: N at a time), and prints each
# metric's mean ± sd, min and max over the runs (build/bin/metric_spread): the numbers a teacher can
# quote, and the band a student's run should land in.
#
#   scripts/seeds.sh 04                          lesson 04, full runs, seeds 1 2 3
#   scripts/seeds.sh --quick --seeds "1 2 3 4 5 7" 04_scaled_dot_product
#   scripts/seeds.sh 11 -- --threads 2           arguments after -- go to the lesson
#   scripts/seeds.sh --jobs 2 09                 two seeds at a time, each on one thread (--threads 1
#                                                unless the lesson's arguments say otherwise)
#   scripts/seeds.sh --reference 04              and keep the runs as the lesson's reference,
#                                                lessons/reference/04_scaled_dot_product.json (full
#                                                runs only; rebuild to carry it into the lesson)
#
# Every claim the lesson makes (lessons/story/claim.hpp) is counted over the seeds; a claim the
# lesson promises that failed on some seed is reported, and the script then exits 1.
# Each run's folder is kept: out/seeds/<lesson>/<full|quick>/seed_<S>/ (--out DIR to change), with
# the lesson's console output in seed_<S>.log beside it. ATTNLAB_BUILD names another build folder.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { echo "usage: scripts/seeds.sh [--quick] [--seeds \"S1 S2 ...\"] [--jobs N] [--out DIR] [--reference] LESSON [-- LESSON_ARGS...]" >&2; exit 2; }
quick=0 seeds="1 2 3" jobs=1 out="" lesson="" reference=0
while (($#)); do
  case "$1" in
    --quick) quick=1 ;;
    --seeds) (($# > 1)) || usage; seeds=$2; shift ;;
    --jobs) (($# > 1)) && [[ $2 =~ ^[1-9][0-9]*$ ]] || usage; jobs=$2; shift ;;
    --out) (($# > 1)) || usage; out=$2; shift ;;
    --reference) reference=1 ;;
    --) shift; break ;;
    -*) echo "seeds: unknown argument '$1'" >&2; usage ;;
    *) [ -z "$lesson" ] || usage; lesson=$1 ;;
  esac
  shift
done
[ -n "$lesson" ] || usage
[ $reference = 0 ] || [ $quick = 0 ] || { echo "seeds: a reference is made of full runs, not --quick ones" >&2; exit 2; }
build=${ATTNLAB_BUILD:-build}
matches=("$build"/bin/"${lesson}"*)
program=${matches[0]}
[ -x "$program" ] && [ ${#matches[@]} -eq 1 ] || { echo "seeds: no single lesson '$lesson' in $build/bin (build it first: scripts/setup.sh)" >&2; exit 1; }
name=$(basename "$program")
mode=$([ $quick = 1 ] && echo quick || echo full)
out=${out:-out/seeds/$name/$mode}
mkdir -p "$out"

# One run: its console output in seed_<S>.log, its exit status in seed_<S>.status.
run_seed() {
  local s=$1 start ms flags=(--seed "$1" --out "$out/seed_$1")
  [ $quick = 1 ] && flags+=(--quick)
  start=$(date +%s%N)
  if "$program" "${flags[@]}" "${lesson_args[@]}" > "$out/seed_$s.log" 2>&1; then
    ms=$((($(date +%s%N) - start) / 1000000))
    printf '%s seed %s: %d.%d s\n' "$name" "$s" $((ms / 1000)) $((ms % 1000 / 100))
    echo 0 > "$out/seed_$s.status"
  else
    echo "$name seed $s: FAILED (see $out/seed_$s.log)" >&2
    echo 1 > "$out/seed_$s.status"
  fi
}
lesson_args=("$@")
# Several seeds at a time share the cores: each runs on one thread unless told otherwise.
if ((jobs > 1)) && [[ " ${lesson_args[*]} " != *" --threads "* ]]; then lesson_args+=(--threads 1); fi
for s in $seeds; do
  rm -f "$out/seed_$s.status"
  while (($(jobs -rp | wc -l) >= jobs)); do wait -n || true; done
  run_seed "$s" &
done
wait
folders=()
for s in $seeds; do
  [ "$(cat "$out/seed_$s.status" 2>/dev/null)" = 0 ] && folders+=("$out/seed_$s")
done
((${#folders[@]})) || exit 1
spread=("$build"/bin/metric_spread)
[ $reference = 1 ] && { mkdir -p lessons/reference; spread+=(--reference "lessons/reference/$name.json"); }
"${spread[@]}" "${folders[@]}"
