# SPDX-License-Identifier: MIT
# Cross build for 64-bit Windows with Debian's mingw-w64 (g++-mingw-w64-x86-64-posix: the posix
# thread model, which std::thread and std::mutex need). Programs are linked statically, so they
# run under Wine, or are copied to a Windows VM, with no DLL beside them. Used by the "windows"
# preset (./quickstart build windows) and the CI stage of the same name (docs/windows.md).
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)

set(CMAKE_C_COMPILER x86_64-w64-mingw32-gcc-posix)
set(CMAKE_CXX_COMPILER x86_64-w64-mingw32-g++-posix)
set(CMAKE_RC_COMPILER x86_64-w64-mingw32-windres)

set(CMAKE_FIND_ROOT_PATH /usr/x86_64-w64-mingw32)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")
# The link through LLVM's ld.lld where it is installed (./quickstart deps installs lld): GNU ld
# took 185 s to link tests/windows/unit.exe, ld.lld under a second. Debian's mingw-w64 g++ ignores
# -fuse-ld=lld (its linker is fixed at its build), so -B puts mingw-lld/collect2 first, which calls
# ld.lld. -DFOREWARN_MINGW_LLD=OFF links with GNU ld.
option(FOREWARN_MINGW_LLD "Link the mingw-w64 cross build with ld.lld when it is installed" ON)
find_program(FOREWARN_LLD_PROGRAM ld.lld)
if(FOREWARN_MINGW_LLD AND FOREWARN_LLD_PROGRAM)
  string(APPEND CMAKE_EXE_LINKER_FLAGS_INIT " -B${CMAKE_CURRENT_LIST_DIR}/mingw-lld/")
endif()

# ctest runs the test programs through Wine (Debian: wine64).
find_program(FOREWARN_WINE NAMES wine wine64 wine-stable)
if(FOREWARN_WINE)
  set(CMAKE_CROSSCOMPILING_EMULATOR "${FOREWARN_WINE}")
endif()

# Header-only libraries of the build machine (RapidJSON, Catch2 v2) reach the cross build one by
# one, through links in the build tree; never /usr/include itself, whose C library headers would
# shadow the Windows ones.
set(FOREWARN_HOST_HEADERS "${CMAKE_BINARY_DIR}/host-headers")
file(MAKE_DIRECTORY "${FOREWARN_HOST_HEADERS}")
foreach(_forewarn_lib IN ITEMS rapidjson catch2)
  if(EXISTS "/usr/include/${_forewarn_lib}" AND NOT EXISTS "${FOREWARN_HOST_HEADERS}/${_forewarn_lib}")
    file(CREATE_LINK "/usr/include/${_forewarn_lib}" "${FOREWARN_HOST_HEADERS}/${_forewarn_lib}" SYMBOLIC)
  endif()
endforeach()
set(RapidJSON_INCLUDE_DIRS "${FOREWARN_HOST_HEADERS}")
