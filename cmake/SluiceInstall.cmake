# `cmake --install` and find_package(Sluice) (docs/Extending.md): headers,
# the libraries as imported targets Sluice::<Area>, the tools, and
# SluiceConfig.cmake in <prefix>/lib/cmake/Sluice.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# Library target -> its exported name (Sluice::Dialect, Sluice::Transforms …).
set(SLUICE_EXPORTED_LIBRARIES
  SluiceDialect=Dialect SluiceTransforms=Transforms SluiceAnalysis=Analysis
  SluiceSpec=Spec SluiceInterpreter=Interpreter SluiceMemoryPlan=MemoryPlan
  SluiceSchedule=Schedule SluiceGemmMapping=GemmMapping SluiceEmit=Emit
  SluiceToolchain=Toolchain SluiceReport=Report SluicePipeline=Pipeline
  SluiceSupport=Support)
set(_sluice_targets)
foreach(entry ${SLUICE_EXPORTED_LIBRARIES})
  string(REPLACE "=" ";" pair ${entry})
  list(GET pair 0 target)
  list(GET pair 1 exportName)
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${exportName})
  target_include_directories(${target} INTERFACE
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  list(APPEND _sluice_targets ${target})
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

# The installed tools keep finding libMLIR.so (outside the system paths).
set_target_properties(sluicec sluice-opt PROPERTIES
  INSTALL_RPATH_USE_LINK_PATH ON)

install(TARGETS ${_sluice_targets} SluicePluginAPI sluicec sluice-opt
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
install(DIRECTORY ${PROJECT_SOURCE_DIR}/dialects/sluice
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/dialects
  FILES_MATCHING PATTERN "*.h" PATTERN "*.td")
install(DIRECTORY ${PROJECT_BINARY_DIR}/dialects/sluice
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
