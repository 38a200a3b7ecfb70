#!/usr/bin/env bash
# Install what attnlab needs (Debian packages only), then configure and build.
# Idempotent: when everything is present it only runs an incremental build.
#
#   scripts/setup.sh                 what the lessons need; Release build in build/
#   scripts/setup.sh --tests         and what only the tests need (PyTorch for the parity checks,
#                                    Chromium for the course book's browser test)
#   scripts/setup.sh --sanitize      AddressSanitizer + UBSan build in build-sanitize/
#   scripts/setup.sh --slides        and Chromium, which prints the lessons' slides to PDF
#                                    (build/bin/course --slides, build/bin/course_slides)
set -euo pipefail
cd "$(dirname "$0")/.."

tests=0 sanitize=0 slides=0
for arg in "$@"; do
  case "$arg" in
    --tests) tests=1 ;;
    --sanitize) sanitize=1 ;;
    --slides) slides=1 ;;
    *) echo "setup: unknown argument '$arg'" >&2; echo "usage: scripts/setup.sh [--tests] [--sanitize] [--slides]" >&2; exit 2 ;;
  esac
done

# The lessons: compilers, the engine's libraries, figures, Fashion-MNIST, the fortunes corpus
# (English text for the language models of lessons 11 to 15). doctest is here too
# (headers only, 0.2 MB) so that one configuration of build/ serves both commands. xtensor-blas
# and LAPACK: the singular values of lesson 18 (lessons/kit/spectrum.cpp). KaTeX (libjs-katex,
# 1 MB of script, style and fonts): the course book typesets the lessons' formulas offline.
packages=(
  build-essential cmake pkg-config
  xtensor-dev xtl-dev libopenblas-dev libxsmm-dev libxtensor-blas-dev liblapack-dev
  doctest-dev zlib1g-dev nlohmann-json3-dev
  libcairo2-dev fonts-dejavu-core libgraphviz-dev
  dataset-fashion-mnist fortunes
  libjs-katex
)
# The tests alone: PyTorch (about 180 MB) for the parity checks, python3 for the scripts,
# Chromium (headless) to load the course book as a browser does, and ChromeDriver with Selenium to
# click through the attention explorer (tests/browser/explorer.py). poppler-utils (pdfinfo and
# pdftoppm, 0.6 MB with its library): the slides' test renders each page of a printed deck as a
# PDF reader does, to count the pages and check that each has something on it.
if ((tests)); then
  packages+=(python3 python3-numpy python3-torch chromium chromium-driver python3-selenium poppler-utils)
fi
if ((slides)); then
  packages+=(chromium)
fi

source scripts/apt_install.sh
install_missing setup "${packages[@]}"

build=build
flags=(-DCMAKE_BUILD_TYPE=Release)
if ((sanitize)); then
  build=build-sanitize
  # The sanitizer build checks the engine, modules, figures and their tests; the lessons
  # (timed, minutes of training), the benchmarks and the graded exercises are exercised by the
  # Release build.
  # -O1 -g1 (line tables: stack traces keep file:line) compiles in half the time of -O2 -g.
  flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
         -DATTNLAB_SANITIZE=ON -DATTNLAB_LESSONS=OFF -DATTNLAB_BENCH=OFF -DATTNLAB_EXERCISES=OFF)
fi
jobs=$(nproc 2>/dev/null || echo 2)
[ -f "$build/CMakeCache.txt" ] || cmake -S . -B "$build" "${flags[@]}" >/dev/null
cmake --build "$build" -j "$jobs"
