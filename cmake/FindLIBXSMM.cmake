# FindLIBXSMM: libxsmm (Debian ships it static only, libxsmm.a), as the imported target
# LIBXSMM::LIBXSMM, with what it needs linked after it by name: threads, dl, rt and m. Its
# pkg-config file lists those as -lpthread -lrt -ldl, which CMake's pkg-config import resolves to
# the static libpthread.a, librt.a and libdl.a of glibc's development files, onto every user's link
# line; by name they resolve as any program's would. Installed beside attnlabConfig.cmake.
find_path(LIBXSMM_INCLUDE_DIR NAMES libxsmm.h)
find_library(LIBXSMM_LIBRARY NAMES xsmm)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(LIBXSMM REQUIRED_VARS LIBXSMM_LIBRARY LIBXSMM_INCLUDE_DIR)
if(LIBXSMM_FOUND AND NOT TARGET LIBXSMM::LIBXSMM)
  find_package(Threads REQUIRED)
  add_library(LIBXSMM::LIBXSMM UNKNOWN IMPORTED)
  set_target_properties(LIBXSMM::LIBXSMM PROPERTIES
    IMPORTED_LOCATION "${LIBXSMM_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${LIBXSMM_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "Threads::Threads;${CMAKE_DL_LIBS};rt;m")
endif()
mark_as_advanced(LIBXSMM_LIBRARY LIBXSMM_INCLUDE_DIR)
