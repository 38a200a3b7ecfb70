#!/usr/bin/env bash
# The package test (ctest: package): attnlab as a library, used the two ways a project uses it.
#   1. cmake --install into a temporary prefix; examples/tiny_attention finds it with
#      find_package(attnlab), builds, and runs (it trains, checkpoints and draws a heatmap).
#   2. A project that adds attnlab with add_subdirectory gets only the libraries, and its own
#      target compiles without attnlab's build flags (-march=native, warnings, sanitizers).
# usage: run.sh SOURCE_DIR BUILD_DIR WORK_DIR
set -euo pipefail
src=$1 build=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
fail() { echo "package test: $*" >&2; exit 1; }
leaks() { grep -oE -- '-march=native|-fsanitize=[a-z,]+|-Wall|-Wextra|-fno-math-errno' "$1" | sort -u; }

cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
targets="$work/prefix/lib/cmake/attnlab/attnlabTargets.cmake"
[ -f "$targets" ] || fail "no attnlabTargets.cmake after install"
[ -f "$work/prefix/include/attnlab/nn/layers.hpp" ] || fail "headers not under include/attnlab"
[ -z "$(leaks "$targets")" ] || fail "exported targets carry build flags: $(leaks "$targets")"

cmake -S "$src/examples/tiny_attention" -B "$work/example" -DCMAKE_PREFIX_PATH="$work/prefix" \
      -DCMAKE_EXPORT_COMPILE_COMMANDS=ON > "$work/example.log"
cmake --build "$work/example" -j 2 >> "$work/example.log"
[ -z "$(leaks "$work/example/compile_commands.json")" ] || fail "the example compiles with attnlab's flags"
"$work/example/tiny_attention" "$work/example/out"
[ -s "$work/example/out/weights.png" ] && [ -s "$work/example/out/tiny_attention.npz" ] || fail "example wrote no figure or checkpoint"

mkdir -p "$work/parent"
cat > "$work/parent/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.18)
project(parent LANGUAGES CXX)
set(CMAKE_CXX_STANDARD 17)
add_subdirectory("$src" attnlab)
add_executable(user main.cpp)
target_link_libraries(user PRIVATE attnlab::nn attnlab::plots)
CMAKE
echo 'int main() { return 0; }' > "$work/parent/main.cpp"
cmake -S "$work/parent" -B "$work/parent/build" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON > "$work/parent.log"
python3 - "$work/parent/build/compile_commands.json" <<'PY' || fail "the parent's own target compiles with attnlab's flags"
import json, sys
user = [c["command"] for c in json.load(open(sys.argv[1])) if c["file"].endswith("/parent/main.cpp")]
assert user and not any(f in user[0] for f in ("-march=native", "-Wall", "-fsanitize")), user
PY
targets_built=$(cmake --build "$work/parent/build" --target help | grep -oE 'test_tape|gradcheck|01_attention_pooling|bench_core' || true)
[ -z "$targets_built" ] || fail "a subproject build defines $targets_built"
echo "package test: installed, example built and ran, subproject clean"
