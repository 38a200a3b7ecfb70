#!/usr/bin/env bash
# Writes the students' copy of the course: the committed tree (git archive HEAD: no build folders,
# no untracked or uncommitted files) without exercises/solutions/ (the solutions, the wrong
# answers that prove the grader, the teacher's answers to the lessons' questions) and without
# grade_solutions' program. The copy configures, builds and grades on its own: scripts/setup.sh,
# then scripts/grade.sh reads every exercise "not attempted" until the student writes it.
# (ctest's handout test builds such a copy from nothing and checks all of this.)
#
#   scripts/handout.sh                       the copy in out/handout/attnlab/
#   scripts/handout.sh --out DIR             the copy in DIR (replaced if it is an earlier copy)
#   scripts/handout.sh --out DIR --archive   and DIR.tar.gz, one folder named as DIR inside
#
# Run it in the teacher's clone. The folder and the archive are written under temporary names
# and renamed into place.
set -euo pipefail

usage() { echo "usage: scripts/handout.sh [--out DIR] [--archive]" >&2; exit 2; }
out="" archive=0
while (($#)); do
  case "$1" in
    --out) (($# > 1)) && [ -n "$2" ] || usage; out=$2; shift ;;
    --archive) archive=1 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
               echo "usage: scripts/handout.sh [--out DIR] [--archive]"; exit 0 ;;
    *) echo "handout: unknown argument '$1'" >&2; usage ;;
  esac
  shift
done
fail() { echo "handout: $*" >&2; exit 1; }

repo=$(cd "$(dirname "$0")/.." && pwd)
# --out is read from where the script was called; the default is inside the clone (out/ is ignored by git).
case "$out" in
  "") out=$repo/out/handout/attnlab ;;
  /*) ;;
  *) out=$PWD/$out ;;
esac
out=${out%/}
[ -n "$out" ] && [ "$out" != "$repo" ] || fail "--out '$out' would overwrite the teacher's clone"
case "$repo/" in "$out"/*) fail "--out '$out' holds the teacher's clone" ;; esac

git -C "$repo" rev-parse --verify -q HEAD > /dev/null ||
  fail "$repo is not a git clone with a commit: the copy is made from the committed tree (this may be a student's copy)"
[ -d "$repo/exercises/solutions" ] || fail "$repo has no exercises/solutions/: it is already a student's copy"

# An existing DIR is replaced only when it is an earlier copy (the course's CMakeLists.txt, no git,
# no solutions): never a folder that is something else.
if [ -e "$out" ] && [ -n "$(ls -A "$out" 2> /dev/null || echo x)" ]; then
  [ -f "$out/CMakeLists.txt" ] && [ -f "$out/exercises/grading/exercise.hpp" ] && [ ! -e "$out/.git" ] &&
    [ ! -e "$out/exercises/solutions" ] ||
    fail "'$out' exists and is not an earlier student copy: give another --out"
fi

parent=$(dirname "$out")
mkdir -p "$parent"
tmp=$(mktemp -d "$parent/.$(basename "$out").tmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"

# The committed tree, then what a student must not get. exercises/CMakeLists.txt builds
# grade_solutions (and its test) only when exercises/solutions/ holds files, so the copy builds
# as it is.
git -C "$repo" archive --format=tar HEAD | tar -x -C "$tmp"
rm -rf "$tmp/exercises/solutions" "$tmp/exercises/grading/solutions_main.cpp"

# Nothing in the copy may register an answer (SOLUTION / WRONG_ANSWER are defined in
# exercises/grading/exercise.hpp, used only in the solutions).
leaks=$(grep -rlE --include='*.cpp' --include='*.hpp' '^[[:space:]]*(SOLUTION|WRONG_ANSWER)[[:space:]]*\(' "$tmp" || true)
[ -z "$leaks" ] || fail "an answer is registered outside exercises/solutions/, in: ${leaks//$tmp\//}"

commit=$(git -C "$repo" rev-parse --short HEAD)
# Replace an earlier copy: move it aside, rename the new one into place, then delete the old.
if [ -e "$out" ]; then
  old=$(mktemp -d "$parent/.$(basename "$out").old.XXXXXX")
  mv "$out" "$old/copy"
  mv "$tmp" "$out"
  rm -rf "$old"
else
  mv "$tmp" "$out"
fi
trap - EXIT
files=$(find "$out" -type f | wc -l)
echo "handout: $out: the student copy of commit $commit ($files files, without exercises/solutions/)"
[ -z "$(git -C "$repo" status --porcelain --untracked-files=no)" ] ||
  echo "handout: note: the clone has uncommitted changes; the copy has the committed tree only" >&2

if ((archive)); then
  tarball=$out.tar.gz
  tmp_tar=$(mktemp "$parent/.$(basename "$tarball").tmp.XXXXXX")
  trap 'rm -f "$tmp_tar"' EXIT
  tar -czf "$tmp_tar" -C "$parent" "$(basename "$out")"
  chmod 644 "$tmp_tar"
  mv "$tmp_tar" "$tarball"
  trap - EXIT
  echo "handout: $tarball: the same copy as an archive ($(du -h "$tarball" | cut -f1))"
fi
echo "handout: a student unpacks it, runs scripts/setup.sh, then scripts/grade.sh after each edit"
