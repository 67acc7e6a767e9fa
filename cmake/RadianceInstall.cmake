# RadianceInstall.cmake: `cmake --install` gives the build tree's shape under a prefix:
# bin/, share/radiance/{kernels,architectures,quantizers}/, include/radiance/ (the ABI), and
# lib/cmake/radiance/ with a find_package(radiance) config for out-of-tree plugins.
include(CMakePackageConfigHelpers)

install(DIRECTORY ${CMAKE_SOURCE_DIR}/shared/include/radiance DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS rad_abi EXPORT radianceTargets)
install(EXPORT radianceTargets NAMESPACE radiance:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/radiance)

file(STRINGS ${CMAKE_SOURCE_DIR}/shared/include/radiance/detail/abi_core.h _abi_line REGEX "#define RAD_ABI_VERSION ")
string(REGEX MATCH "[0-9]+" RAD_ABI_VERSION_NUMBER "${_abi_line}")
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/radianceConfig.cmake.in
  ${CMAKE_BINARY_DIR}/radianceConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/radiance
  PATH_VARS RAD_INSTALL_HOME_REL CMAKE_INSTALL_INCLUDEDIR)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/radianceConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/radianceConfig.cmake ${CMAKE_BINARY_DIR}/radianceConfigVersion.cmake
  ${CMAKE_SOURCE_DIR}/cmake/RadiancePlugin.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/radiance)
# The home's directories exist even before any plugin is installed into them.
foreach(kind kernels architectures quantizers)
  install(DIRECTORY DESTINATION ${RAD_INSTALL_HOME_REL}/${kind})
  file(MAKE_DIRECTORY ${RAD_BUILD_HOME}/${kind})
endforeach()
# The demo model ships beside the plugins: `radiance serve` with no --model serves it.
if(EXISTS ${CMAKE_SOURCE_DIR}/models/demo/config.json)
  file(MAKE_DIRECTORY ${RAD_BUILD_HOME}/models)
  file(CREATE_LINK ${CMAKE_SOURCE_DIR}/models/demo ${RAD_BUILD_HOME}/models/demo SYMBOLIC)
  install(DIRECTORY ${CMAKE_SOURCE_DIR}/models/demo DESTINATION ${RAD_INSTALL_HOME_REL}/models)
endif()
