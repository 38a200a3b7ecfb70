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

# The donor: an object library of one empty file, compiled with the directory's options.
function(attnlab_pch_donor)
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/attnlab_pch.cpp "// the precompiled header's donor\n")
  add_library(attnlab_pch OBJECT ${CMAKE_CURRENT_BINARY_DIR}/attnlab_pch.cpp)
  target_link_libraries(attnlab_pch PRIVATE attnlab_headers)
  target_precompile_headers(attnlab_pch PRIVATE
    <algorithm> <cmath> <functional> <memory> <string> <vector>
    <xtensor/xarray.hpp> <xtensor/xbuilder.hpp> <xtensor/xmath.hpp> <xtensor/xview.hpp>)
endfunction()

# Every compiled target in DIR and the folders under it reuses the donor's header, but those that
# set ATTNLAB_NO_PCH.
function(attnlab_reuse_pch dir)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(t ${targets})
    get_target_property(type ${t} TYPE)
    get_target_property(no_pch ${t} ATTNLAB_NO_PCH)  # a target compiled with other options
    if(type MATCHES "^(EXECUTABLE|STATIC_LIBRARY|SHARED_LIBRARY|OBJECT_LIBRARY)$" AND NOT t STREQUAL attnlab_pch
       AND NOT no_pch)
      target_precompile_headers(${t} REUSE_FROM attnlab_pch)
    endif()
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub ${subdirs})
    attnlab_reuse_pch(${sub})
  endforeach()
endfunction()
