#!/usr/bin/env bash
# The package test (ctest: package): attnlab as a library, used the two ways a project uses it.
#   1. cmake --install into a temporary prefix, then the whole prefix moved elsewhere (the package
#      must travel: no absolute path in its exported targets, its dependencies found again);
#      examples/tiny_attention finds it there with find_package(attnlab), builds, and runs (it
#      trains, checkpoints and draws a heatmap); examples/nn_only asks for COMPONENTS nn alone and
#      configures with pkg-config unavailable, so it cannot be asking for cairo or Graphviz.
#      Installed headers name each other from the one include root (<attnlab/...>).
#   2. A project that adds attnlab with add_subdirectory gets only the libraries, and its own
#      target compiles without attnlab's build flags (-march=native, warnings, sanitizers).
# usage: run.sh SOURCE_DIR BUILD_DIR WORK_DIR
set -euo pipefail
src=$1 build=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
fail() { echo "package test: $*" >&2; exit 1; }
leaks() { grep -oE -- '-march=native|-fsanitize=[a-z,]+|-Wall|-Wextra|-fno-math-errno' "$1" | sort -u; }

cmake --install "$build" --prefix "$work/first" > "$work/install.log"
mv "$work/first" "$work/prefix"  # the install travels: nothing may point back to where it was made
targets="$work/prefix/lib/cmake/attnlab/attnlabTargets.cmake"
[ -f "$targets" ] || fail "no attnlabTargets.cmake after install"
[ -f "$work/prefix/include/attnlab/nn/layers.hpp" ] || fail "headers not under include/attnlab"
[ -z "$(leaks "$targets")" ] || fail "exported targets carry build flags: $(leaks "$targets")"
absolute=$(grep -hoE '"?/(usr|opt|home|work|tmp)/[^";]*' "$work"/prefix/lib/cmake/attnlab/attnlab*Targets*.cmake | sort -u || true)
[ -z "$absolute" ] || fail "exported targets name absolute paths: $absolute"
grep -q 'INTERFACE_INCLUDE_DIRECTORIES "${_IMPORT_PREFIX}/include"$' "$targets" ||
  fail "the headers target does not name include/ alone: $(grep INTERFACE_INCLUDE_DIRECTORIES "$targets" | head -1)"
short=$(grep -rlE '#include "(core|io|nn|plots)/' "$work/prefix/include/attnlab" | head -3 || true)
[ -z "$short" ] || fail "installed headers still include from the source root: $short"
grep -qE 'libpthread\.a|librt\.a|libdl\.a' "$work"/prefix/lib/cmake/attnlab/attnlab*Targets*.cmake && fail "static system libraries on the link line"

cmake -S "$src/examples/nn_only" -B "$work/nn_only" -DCMAKE_PREFIX_PATH="$work/prefix" \
      -DPKG_CONFIG_EXECUTABLE=/nonexistent/pkg-config > "$work/nn_only.log" 2>&1 ||
  fail "COMPONENTS nn did not configure without pkg-config (cairo, Graphviz): $(tail -5 "$work/nn_only.log")"
cmake --build "$work/nn_only" -j 2 >> "$work/nn_only.log" 2>&1 || fail "nn_only did not build: $(tail -5 "$work/nn_only.log")"
"$work/nn_only/nn_only" "$work/nn_only/out" || fail "nn_only ran and failed"

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
echo "package test: installed, moved, both examples built and ran (nn alone without pkg-config), subproject clean"
