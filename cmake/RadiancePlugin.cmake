# RadiancePlugin.cmake: rad_add_plugin() and rad_plugin_defaults(), the one way every plugin is
# built, in the tree and out of it (installed beside radianceConfig.cmake).
#
#   rad_add_plugin(NAME KIND SOURCES a.cpp ... [HIP_SOURCES k.hip ...] [OUTPUT_HOME dir] [NO_INSTALL])
#
# KIND is kernels, architectures or quantizers: the directory of a RADIANCE_HOME the engine
# loads it from. The plugin compiles against the ABI headers only (target radiance::abi) and links
# nothing of the engine.

include_guard(GLOBAL)

macro(rad_plugin_defaults)
  if(NOT CMAKE_CXX_STANDARD)
    set(CMAKE_CXX_STANDARD 20)
    set(CMAKE_CXX_STANDARD_REQUIRED ON)
  endif()
  if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
    set(CMAKE_BUILD_TYPE Release)
  endif()
  set(CMAKE_POSITION_INDEPENDENT_CODE ON)
endmacro()

function(rad_add_plugin name kind)
  cmake_parse_arguments(P "NO_INSTALL" "OUTPUT_HOME" "SOURCES;HIP_SOURCES" ${ARGN})
  if(NOT kind MATCHES "^(kernels|architectures|quantizers)$")
    message(FATAL_ERROR "rad_add_plugin(${name}): kind must be kernels, architectures or quantizers, not '${kind}'")
  endif()
  add_library(${name} MODULE ${P_SOURCES} ${P_HIP_SOURCES})
  if(P_HIP_SOURCES)
    set_source_files_properties(${P_HIP_SOURCES} PROPERTIES LANGUAGE HIP)
  endif()
  target_link_libraries(${name} PRIVATE radiance::abi)
  # Only the rad_* exports leave the object; -z defs catches a plugin that would need the engine.
  set_target_properties(${name} PROPERTIES
    C_VISIBILITY_PRESET hidden CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON
    PREFIX "lib")
  # Not in the fuzzing tree: clang links its sanitizer runtime into the executable only, so a
  # sanitized plugin has the runtime's symbols undefined until it is loaded (gcc's is a shared
  # library the plugin links).
  if(NOT RAD_FUZZ)
    target_link_options(${name} PRIVATE -Wl,-z,defs)
  endif()
  if(P_OUTPUT_HOME)
    set(home ${P_OUTPUT_HOME})
  elseif(DEFINED RAD_BUILD_HOME)
    set(home ${RAD_BUILD_HOME})
  else()
    set(home ${CMAKE_BINARY_DIR}/share/radiance)
  endif()
  set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${home}/${kind})
  if(P_NO_INSTALL)
    return()
  endif()
  if(DEFINED RAD_PLUGIN_INSTALL_HOME)
    install(TARGETS ${name} LIBRARY DESTINATION ${RAD_PLUGIN_INSTALL_HOME}/${kind})
  elseif(DEFINED RAD_INSTALL_HOME_REL)
    install(TARGETS ${name} LIBRARY DESTINATION ${RAD_INSTALL_HOME_REL}/${kind})
  elseif(DEFINED RADIANCE_HOME)
    install(TARGETS ${name} LIBRARY DESTINATION ${RADIANCE_HOME}/${kind})
  endif()
endfunction()
