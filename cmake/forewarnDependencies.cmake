# SPDX-License-Identifier: MIT
# What the library itself needs: libcurl, RapidJSON, threads. forewarnConfig.cmake asks for the
# same three (cmake/forewarnConfig.cmake.in), so keep the two in step.
include_guard(GLOBAL)

find_package(Threads REQUIRED)
# The default transport: WinHTTP on Windows (part of the system), libcurl elsewhere.
if(NOT WIN32)
  find_package(CURL REQUIRED)
endif()

include(forewarnRapidJSON)
if(NOT TARGET RapidJSON::RapidJSON)
  message(FATAL_ERROR "forewarn needs RapidJSON (Debian: apt-get install rapidjson-dev)")
endif()
