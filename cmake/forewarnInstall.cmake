# SPDX-License-Identifier: MIT
# install(EXPORT), forewarnConfig.cmake, version file, pkg-config file. (Filled in by packaging work.)
include_guard(GLOBAL)
include(GNUInstallDirs)
install(TARGETS forewarn EXPORT forewarnTargets FILE_SET HEADERS DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
