# cmake --install: the libraries, their headers under include/attnlab/, and a CMake package that a
# user's project finds with find_package(attnlab) and links as attnlab::nn or attnlab::plots
# (examples/tiny_attention uses both; examples/nn_only only nn). The package travels: it names its
# dependencies as targets (OpenBLAS::OpenBLAS, LIBXSMM::LIBXSMM, ZLIB::ZLIB, cairo and Graphviz
# through pkg-config), never as paths, and attnlabConfig.cmake finds them again on the machine
# that uses it, with the find modules installed beside it; the installed tree can be moved to
# another prefix. Components: core, io and nn need neither cairo nor Graphviz; plots needs both.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(ATTNLAB_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/attnlab)

install(TARGETS attnlab_headers attnlab_runtime attnlab_core attnlab_io attnlab_nn
        EXPORT attnlabTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS attnlab_plots EXPORT attnlabPlotsTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
foreach(dir core io nn plots)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/attnlab/${dir}
          FILES_MATCHING PATTERN "*.hpp")
endforeach()
# In the source tree the headers name each other from its root ("core/tensor.hpp"); installed,
# from include/ ("attnlab/core/tensor.hpp"), the one folder a user puts on the include path.
install(CODE "
  file(GLOB_RECURSE attnlab_headers \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_INCLUDEDIR}/attnlab/*.hpp\")
  foreach(header \${attnlab_headers})
    file(READ \${header} text)
    string(REGEX REPLACE \"#include \\\"(core|io|nn|plots)/\" \"#include \\\"attnlab/\\\\1/\" text \"\${text}\")
    file(WRITE \${header} \"\${text}\")
  endforeach()
")
install(EXPORT attnlabTargets NAMESPACE attnlab:: DESTINATION ${ATTNLAB_CMAKE_DIR})
install(EXPORT attnlabPlotsTargets NAMESPACE attnlab:: DESTINATION ${ATTNLAB_CMAKE_DIR})

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/attnlabConfig.cmake.in
  ${CMAKE_BINARY_DIR}/attnlabConfig.cmake INSTALL_DESTINATION ${ATTNLAB_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/attnlabConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/attnlabConfig.cmake ${CMAKE_BINARY_DIR}/attnlabConfigVersion.cmake
              ${CMAKE_CURRENT_LIST_DIR}/FindOpenBLAS.cmake ${CMAKE_CURRENT_LIST_DIR}/FindLIBXSMM.cmake
        DESTINATION ${ATTNLAB_CMAKE_DIR})
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/attnlab)
