# FindOpenBLAS: OpenBLAS itself (attnlab calls cblas_?gemm and openblas_set_num_threads, so not the
# reference BLAS an alternatives link may point to), as the imported target OpenBLAS::OpenBLAS.
# Used to build attnlab and, installed beside attnlabConfig.cmake, to find OpenBLAS again on the
# machine that uses an installed attnlab: the exported targets name OpenBLAS::OpenBLAS, never a path.
#   OpenBLAS_LIBRARY      the library
#   OpenBLAS_INCLUDE_DIR  the folder of cblas.h (attnlab's .cpp files include it; a user never does)
find_library(OpenBLAS_LIBRARY NAMES openblas)
find_path(OpenBLAS_INCLUDE_DIR NAMES cblas.h PATH_SUFFIXES openblas x86_64-linux-gnu)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(OpenBLAS REQUIRED_VARS OpenBLAS_LIBRARY OpenBLAS_INCLUDE_DIR)
if(OpenBLAS_FOUND AND NOT TARGET OpenBLAS::OpenBLAS)
  add_library(OpenBLAS::OpenBLAS UNKNOWN IMPORTED)
  set_target_properties(OpenBLAS::OpenBLAS PROPERTIES IMPORTED_LOCATION "${OpenBLAS_LIBRARY}")
endif()
mark_as_advanced(OpenBLAS_LIBRARY OpenBLAS_INCLUDE_DIR)
