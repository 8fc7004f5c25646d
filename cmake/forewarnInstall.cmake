# SPDX-License-Identifier: MIT
# install(EXPORT), forewarnConfig.cmake, its version file and forewarn.pc. forewarn is header-only,
# so everything goes under the architecture-independent datadir (share/cmake, share/pkgconfig).
include_guard(GLOBAL)
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(FOREWARN_INSTALL_CMAKEDIR "${CMAKE_INSTALL_DATADIR}/cmake/forewarn"
  CACHE STRING "Where forewarnConfig.cmake is installed, relative to the prefix")
set(FOREWARN_INSTALL_PKGCONFIGDIR "${CMAKE_INSTALL_DATADIR}/pkgconfig"
  CACHE STRING "Where forewarn.pc is installed, relative to the prefix")

# forewarn::forewarn and forewarn::emulator (the emulator's headers, for users' in-process tests).
# The forewarn-emulator program, when built, is installed by tools/emulator/CMakeLists.txt.
install(TARGETS forewarn forewarn_emulator EXPORT forewarnTargets
  FILE_SET HEADERS DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT forewarnTargets
  NAMESPACE forewarn::
  DESTINATION ${FOREWARN_INSTALL_CMAKEDIR})

set(_forewarn_gen "${PROJECT_BINARY_DIR}/cmake")
configure_package_config_file("${CMAKE_CURRENT_LIST_DIR}/forewarnConfig.cmake.in"
  "${_forewarn_gen}/forewarnConfig.cmake"
  INSTALL_DESTINATION ${FOREWARN_INSTALL_CMAKEDIR}
  NO_SET_AND_CHECK_MACRO)
# 0.x: a new minor version may break the API, but SameMajorVersion is the promise from 1.0 on.
write_basic_package_version_file("${_forewarn_gen}/forewarnConfigVersion.cmake"
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMajorVersion
  ARCH_INDEPENDENT)
install(FILES
  "${_forewarn_gen}/forewarnConfig.cmake"
  "${_forewarn_gen}/forewarnConfigVersion.cmake"
  "${CMAKE_CURRENT_LIST_DIR}/forewarnRapidJSON.cmake"
  DESTINATION ${FOREWARN_INSTALL_CMAKEDIR})

# Relocatable: the prefix is found from the .pc file's own place (pkg-config's pcfiledir).
file(RELATIVE_PATH FOREWARN_PC_PREFIX_FROM_PCFILEDIR "/${FOREWARN_INSTALL_PKGCONFIGDIR}" "/")
string(REGEX REPLACE "/$" "" FOREWARN_PC_PREFIX_FROM_PCFILEDIR "${FOREWARN_PC_PREFIX_FROM_PCFILEDIR}")
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(FOREWARN_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
else()
  set(FOREWARN_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
configure_file("${CMAKE_CURRENT_LIST_DIR}/forewarn.pc.in" "${_forewarn_gen}/forewarn.pc" @ONLY)
install(FILES "${_forewarn_gen}/forewarn.pc" DESTINATION ${FOREWARN_INSTALL_PKGCONFIGDIR})

install(FILES "${PROJECT_SOURCE_DIR}/LICENSE" DESTINATION "${CMAKE_INSTALL_DATADIR}/doc/forewarn" OPTIONAL)
unset(_forewarn_gen)
