# `cmake --install` and find_package(Sluice) (docs/Extending.md): headers,
# the libraries as imported targets Sluice::<Area>, the tools, and
# SluiceConfig.cmake in <prefix>/lib/cmake/Sluice.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# Every static library named Sluice<Area> is exported as Sluice::<Area>
# (Sluice::Dialect, Sluice::Transforms, …), found by walking the build's
# directories, so a new library is exported without touching this file.
function(sluice_collect_libraries dir out)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  set(found)
  foreach(target ${targets})
    get_target_property(type ${target} TYPE)
    if(type STREQUAL "STATIC_LIBRARY" AND target MATCHES "^Sluice")
      list(APPEND found ${target})
    endif()
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(subdir ${subdirs})
    sluice_collect_libraries(${subdir} sub)
    list(APPEND found ${sub})
  endforeach()
  set(${out} ${found} PARENT_SCOPE)
endfunction()
sluice_collect_libraries(${PROJECT_SOURCE_DIR}/dialects _sluice_dialect_libs)
sluice_collect_libraries(${PROJECT_SOURCE_DIR}/lib _sluice_lib_libs)
set(_sluice_targets ${_sluice_dialect_libs} ${_sluice_lib_libs})
foreach(target ${_sluice_targets})
  string(REGEX REPLACE "^Sluice" "" exportName ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${exportName})
  target_include_directories(${target} INTERFACE
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
endforeach()

# Pass plugins resolve Sluice's symbols from the sluice-opt that loads them
# (ENABLE_EXPORTS there), so they take only the headers and MLIR: linking
# the static libraries into a plugin would give it a second copy of the
# dialect (other TypeIDs, casts that fail).
add_library(SluicePluginAPI INTERFACE)
set_target_properties(SluicePluginAPI PROPERTIES EXPORT_NAME PluginAPI)
target_include_directories(SluicePluginAPI INTERFACE
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_link_libraries(SluicePluginAPI INTERFACE MLIR)

# The tools; they keep finding libMLIR.so (outside the system paths).
set(_sluice_tools)
foreach(tool sluicec sluice-opt sluice-translate)
  if(TARGET ${tool})
    list(APPEND _sluice_tools ${tool})
  endif()
endforeach()
set_target_properties(${_sluice_tools} PROPERTIES
  INSTALL_RPATH_USE_LINK_PATH ON)

install(TARGETS ${_sluice_targets} SluicePluginAPI ${_sluice_tools}
  EXPORT SluiceTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT SluiceTargets NAMESPACE Sluice::
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Sluice)

# Headers keep the repository's include roots: "sluice/…" and
# "dialects/sluice/…" (with the generated .inc files beside the .td ones).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/sluice
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/dialects/
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/dialects
  FILES_MATCHING PATTERN "*.h" PATTERN "*.td")
install(DIRECTORY ${PROJECT_BINARY_DIR}/dialects/
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/dialects
  FILES_MATCHING PATTERN "*.inc"
  PATTERN "CMakeFiles" EXCLUDE)

configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/SluiceConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/SluiceConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Sluice)
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/cmake/SluiceConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmake/SluiceConfig.cmake
              ${PROJECT_BINARY_DIR}/cmake/SluiceConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Sluice)
