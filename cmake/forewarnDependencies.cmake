# SPDX-License-Identifier: MIT
# What the library itself needs: libcurl, RapidJSON, threads. forewarnConfig.cmake asks for the
# same three (cmake/forewarnConfig.cmake.in), so keep the two in step.
include_guard(GLOBAL)

find_package(Threads REQUIRED)
find_package(CURL REQUIRED)

include(forewarnRapidJSON)
if(NOT TARGET RapidJSON::RapidJSON)
  message(FATAL_ERROR "forewarn needs RapidJSON (Debian: apt-get install rapidjson-dev)")
endif()
