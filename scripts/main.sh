#!/usr/bin/env bash
# Set up, build, and run the whole course: every lesson in --quick mode, one after another, then
# the gradient checks (112 s for the seventeen lessons and gradcheck on 2026-11-27, a 2-core AMD
# EPYC machine shared with other work: one lesson at a time, on one thread); then write the course
# book, out/index.html with a page per lesson, and
# print a summary (each lesson, its status, its headline metric, its time). A lesson that fails
# does not stop the others. Extra arguments go to build/bin/course:
#
#   scripts/main.sh --full            the full course (each lesson's full run, up to 10 minutes each)
#   scripts/main.sh --only 01,04      some lessons
#   scripts/main.sh --pdf             figures as PDF too, for slides
#   scripts/main.sh --slides          each lesson's slides too, out/slides/NN_name.pdf (installs Chromium)
set -euo pipefail
cd "$(dirname "$0")/.."
setup=()
for arg in "$@"; do [ "$arg" = --slides ] && setup=(--slides); done
scripts/setup.sh "${setup[@]}"
exec build/bin/course "$@"
