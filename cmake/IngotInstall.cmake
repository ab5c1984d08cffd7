# What `cmake --install` puts under the prefix besides the CLI and the plugins (installed where
# they are defined): libingot, its headers, the CMake package for find_package(Ingot), the
# shipped configs and bash completion.
include(CMakePackageConfigHelpers)
set(INGOT_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/Ingot)

install(TARGETS ingot_core EXPORT IngotTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
# All of core/include: the public API and the plugin SDK (ingot/plugin) that plugins build against.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/core/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT IngotTargets NAMESPACE Ingot:: DESTINATION ${INGOT_INSTALL_CMAKEDIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/IngotConfig.cmake.in
  ${PROJECT_BINARY_DIR}/IngotConfig.cmake INSTALL_DESTINATION ${INGOT_INSTALL_CMAKEDIR})
# Before 1.0 a minor release may break the API, so only the same major.minor matches (as the soname).
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(compatibility SameMinorVersion)
else()
  set(compatibility SameMajorVersion)
endif()
write_basic_package_version_file(${PROJECT_BINARY_DIR}/IngotConfigVersion.cmake
  COMPATIBILITY ${compatibility})
install(FILES ${PROJECT_BINARY_DIR}/IngotConfig.cmake ${PROJECT_BINARY_DIR}/IngotConfigVersion.cmake
  DESTINATION ${INGOT_INSTALL_CMAKEDIR})
# Bash completion of the CLI, where bash-completion looks for it (<prefix>/share/...).
install(FILES ${PROJECT_SOURCE_DIR}/scripts/completion/ingot.bash
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME ingot)
# The shipped pipelines, which `ingot run configs/NAME.yaml` finds from any folder.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/configs/ DESTINATION ${CMAKE_INSTALL_DATADIR}/ingot/configs
        FILES_MATCHING PATTERN "*.yaml")
