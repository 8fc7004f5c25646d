# SPDX-License-Identifier: MIT
# install(EXPORT), forewarnConfig.cmake, its version file and forewarn.pc (the install component
# "dev": the libforewarn-dev package). Header-only, everything
# goes under the architecture-independent datadir (share/cmake, share/pkgconfig); the compiled
# library (FOREWARN_COMPILED_LIB) is architecture-dependent, so then it all goes under libdir.
include_guard(GLOBAL)
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

if(FOREWARN_COMPILED_LIB)
  set(_forewarn_packagedir "${CMAKE_INSTALL_LIBDIR}")
  set(_forewarn_arch_independent "")
  set(FOREWARN_PC_CFLAGS " -DFOREWARN_COMPILED_LIB")
  set(FOREWARN_PC_LIBS " -L\${libdir} -lforewarn")
  set(FOREWARN_PC_LIBDIR_LINE "libdir=\${prefix}/${CMAKE_INSTALL_LIBDIR}\n")
else()
  set(_forewarn_packagedir "${CMAKE_INSTALL_DATADIR}")
  set(_forewarn_arch_independent ARCH_INDEPENDENT)
  set(FOREWARN_PC_CFLAGS "")
  set(FOREWARN_PC_LIBS "")
  set(FOREWARN_PC_LIBDIR_LINE "")
endif()
set(FOREWARN_INSTALL_CMAKEDIR "${_forewarn_packagedir}/cmake/forewarn"
  CACHE STRING "Where forewarnConfig.cmake is installed, relative to the prefix")
set(FOREWARN_INSTALL_PKGCONFIGDIR "${_forewarn_packagedir}/pkgconfig"
  CACHE STRING "Where forewarn.pc is installed, relative to the prefix")

# forewarn::forewarn and forewarn::emulator (the emulator's headers, for users' in-process tests).
# The forewarn-emulator program, when built, is installed by tools/emulator/CMakeLists.txt.
# (COMPONENT belongs to each kind of artifact, so it is said for each.)
install(TARGETS forewarn forewarn_emulator EXPORT forewarnTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT dev
  FILE_SET HEADERS DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev
  FILE_SET other_platform_headers DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev)
install(EXPORT forewarnTargets
  NAMESPACE forewarn::
  DESTINATION ${FOREWARN_INSTALL_CMAKEDIR}
  COMPONENT dev)

set(_forewarn_gen "${PROJECT_BINARY_DIR}/cmake")
configure_package_config_file("${CMAKE_CURRENT_LIST_DIR}/forewarnConfig.cmake.in"
  "${_forewarn_gen}/forewarnConfig.cmake"
  INSTALL_DESTINATION ${FOREWARN_INSTALL_CMAKEDIR}
  NO_SET_AND_CHECK_MACRO)
# 0.x: a new minor version may break the API, but SameMajorVersion is the promise from 1.0 on.
write_basic_package_version_file("${_forewarn_gen}/forewarnConfigVersion.cmake"
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMajorVersion
  ${_forewarn_arch_independent})
install(FILES
  "${_forewarn_gen}/forewarnConfig.cmake"
  "${_forewarn_gen}/forewarnConfigVersion.cmake"
  "${CMAKE_CURRENT_LIST_DIR}/forewarnRapidJSON.cmake"
  DESTINATION ${FOREWARN_INSTALL_CMAKEDIR}
  COMPONENT dev)

# Relocatable: the prefix is found from the .pc file's own place (pkg-config's pcfiledir).
file(RELATIVE_PATH FOREWARN_PC_PREFIX_FROM_PCFILEDIR "/${FOREWARN_INSTALL_PKGCONFIGDIR}" "/")
string(REGEX REPLACE "/$" "" FOREWARN_PC_PREFIX_FROM_PCFILEDIR "${FOREWARN_PC_PREFIX_FROM_PCFILEDIR}")
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(FOREWARN_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
else()
  set(FOREWARN_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
configure_file("${CMAKE_CURRENT_LIST_DIR}/forewarn.pc.in" "${_forewarn_gen}/forewarn.pc" @ONLY)
install(FILES "${_forewarn_gen}/forewarn.pc" DESTINATION ${FOREWARN_INSTALL_PKGCONFIGDIR} COMPONENT dev)

# The packages (FOREWARN_PACKAGE, cmake/forewarnPackage.cmake) carry the licence in each
# package's own copyright file instead.
if(NOT FOREWARN_PACKAGE)
  install(FILES "${PROJECT_SOURCE_DIR}/LICENSE" DESTINATION "${CMAKE_INSTALL_DATADIR}/doc/forewarn" OPTIONAL COMPONENT dev)
endif()
unset(_forewarn_gen)
unset(_forewarn_packagedir)
unset(_forewarn_arch_independent)
