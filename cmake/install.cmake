# cmake --install: the libraries, their headers under include/attnlab/, and a CMake package, so
# that a user's project says find_package(attnlab) and links attnlab::nn or attnlab::plots
# (examples/tiny_attention shows one). The libraries are static; what they link in turn (OpenBLAS,
# libxsmm, zlib, cairo, Graphviz) is found again by attnlabConfig.cmake on the user's machine.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(ATTNLAB_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/attnlab)

install(TARGETS attnlab_headers attnlab_runtime attnlab_core attnlab_io attnlab_nn attnlab_plots
        EXPORT attnlabTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
foreach(dir core io nn plots)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/attnlab/${dir}
          FILES_MATCHING PATTERN "*.hpp")
endforeach()
install(EXPORT attnlabTargets NAMESPACE attnlab:: DESTINATION ${ATTNLAB_CMAKE_DIR})

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/attnlabConfig.cmake.in
  ${CMAKE_BINARY_DIR}/attnlabConfig.cmake INSTALL_DESTINATION ${ATTNLAB_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/attnlabConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/attnlabConfig.cmake ${CMAKE_BINARY_DIR}/attnlabConfigVersion.cmake
        DESTINATION ${ATTNLAB_CMAKE_DIR})
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/attnlab)
