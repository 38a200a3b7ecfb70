# Precompiled xtensor headers. Most of attnlab's translation units include xtensor's expression
# templates, and parsing them again costs about 1.7 s of each unit's 3 to 25 s (measured with
# GCC 12 at -O3: core/ops/attention.cpp 8.0 -> 6.3 s, tests/test_attention.cpp 8.7 -> 6.6 s,
# lessons/kit/fit.cpp 2.7 -> 1.6 s): one header compiled once and reused by every target. (With
# the exercises left out of the sanitizer build, a fresh-clone CI run on two idle cores went from
# 29 min 44 s to 27 min 11 s.) GCC only: it falls back to the text, with a -Winvalid-pch warning,
# when a target's options do not match the header, where clang stops with an error. ATTNLAB_PCH=OFF
# turns it off (scripts/fuzz.sh builds without it, so one build still proves every file includes
# what it uses).
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  set(ATTNLAB_PCH_DEFAULT ON)
else()
  set(ATTNLAB_PCH_DEFAULT OFF)
endif()
option(ATTNLAB_PCH "Precompile xtensor's headers once for every target (GCC)" ${ATTNLAB_PCH_DEFAULT})

# A donor: an object library of one empty file, compiled with the directory's options and any
# OPTIONS given (GCC takes a header only at the optimization level it was made with).
#   attnlab_pch_donor(NAME [OPTIONS ...])
function(attnlab_pch_donor name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "OPTIONS")
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/${name}.cpp "// the precompiled header's donor\n")
  add_library(${name} OBJECT ${CMAKE_CURRENT_BINARY_DIR}/${name}.cpp)
  target_link_libraries(${name} PRIVATE attnlab_headers)
  target_compile_options(${name} PRIVATE ${arg_OPTIONS})
  set_target_properties(${name} PROPERTIES ATTNLAB_PCH_DONOR ${name})
  target_precompile_headers(${name} PRIVATE
    <algorithm> <cmath> <functional> <memory> <string> <vector>
    <xtensor/xarray.hpp> <xtensor/xbuilder.hpp> <xtensor/xmath.hpp> <xtensor/xview.hpp>)
endfunction()

# Every compiled target in DIR and the folders under it reuses a donor's header: the one its
# ATTNLAB_PCH_DONOR property names (a target compiled with other options), else attnlab_pch.
function(attnlab_reuse_pch dir)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(t ${targets})
    get_target_property(type ${t} TYPE)
    get_target_property(donor ${t} ATTNLAB_PCH_DONOR)
    if(NOT donor)
      set(donor attnlab_pch)
    endif()
    if(type MATCHES "^(EXECUTABLE|STATIC_LIBRARY|SHARED_LIBRARY|OBJECT_LIBRARY)$" AND NOT t STREQUAL donor)
      target_precompile_headers(${t} REUSE_FROM ${donor})
    endif()
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub ${subdirs})
    attnlab_reuse_pch(${sub})
  endforeach()
endfunction()

# Code that only calls the engine and compares its answers (the tests, the graded exercises)
# compiles at -O0, with a header made at -O0: the engine it calls keeps the build's options (-O3 in
# Release, -O1 under the sanitizers), and -O0 more than halves such a file's compile time
# (tests/: 295 -> 127 s of CPU in a Release build; the 63 tests other than the lessons' still
# take 23 s on two cores).
function(attnlab_compile_at_O0 target)
  target_compile_options(${target} PRIVATE -O0)
  set_target_properties(${target} PROPERTIES ATTNLAB_PCH_DONOR attnlab_pch_O0)
endfunction()
