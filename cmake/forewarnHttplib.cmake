# SPDX-License-Identifier: MIT
# cpp-httplib for the emulator and the loopback test servers. Debian ships it as a compiled
# library found through pkg-config (libcpp-httplib-dev); a header-only copy also works.
include_guard(GLOBAL)

if(NOT TARGET forewarn_httplib)
  find_package(PkgConfig QUIET)
  if(PkgConfig_FOUND)
    pkg_check_modules(FOREWARN_HTTPLIB QUIET IMPORTED_TARGET cpp-httplib)
  endif()
  add_library(forewarn_httplib INTERFACE)
  if(FOREWARN_HTTPLIB_FOUND)
    target_link_libraries(forewarn_httplib INTERFACE PkgConfig::FOREWARN_HTTPLIB)
  else()
    find_path(FOREWARN_HTTPLIB_INCLUDE_DIR httplib.h)
    if(NOT FOREWARN_HTTPLIB_INCLUDE_DIR)
      message(FATAL_ERROR "The emulator and tests need cpp-httplib (Debian: apt-get install libcpp-httplib-dev), "
                          "or configure with -DFOREWARN_BUILD_TESTS=OFF -DFOREWARN_BUILD_EMULATOR=OFF")
    endif()
    target_include_directories(forewarn_httplib SYSTEM INTERFACE "${FOREWARN_HTTPLIB_INCLUDE_DIR}")
  endif()
  target_link_libraries(forewarn_httplib INTERFACE Threads::Threads)
endif()
