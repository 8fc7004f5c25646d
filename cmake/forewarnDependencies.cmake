# SPDX-License-Identifier: MIT
# What the library itself needs: libcurl, RapidJSON, threads. Also used by the installed config.
include_guard(GLOBAL)

find_package(Threads REQUIRED)
find_package(CURL REQUIRED)

# RapidJSON's own CMake config (Debian's 1.1.0) sets variables but defines no target: make one.
if(NOT TARGET RapidJSON::RapidJSON)
  find_package(RapidJSON CONFIG QUIET)
  if(NOT RapidJSON_FOUND)
    find_path(FOREWARN_RAPIDJSON_INCLUDE_DIR rapidjson/document.h)
    if(NOT FOREWARN_RAPIDJSON_INCLUDE_DIR)
      message(FATAL_ERROR "forewarn needs RapidJSON (Debian: apt-get install rapidjson-dev)")
    endif()
    set(RAPIDJSON_INCLUDE_DIRS "${FOREWARN_RAPIDJSON_INCLUDE_DIR}")
  endif()
  if(NOT TARGET RapidJSON::RapidJSON)
    if(TARGET RapidJSON)
      add_library(RapidJSON::RapidJSON ALIAS RapidJSON)
    else()
      add_library(RapidJSON::RapidJSON INTERFACE IMPORTED)
      if(NOT RAPIDJSON_INCLUDE_DIRS AND RapidJSON_INCLUDE_DIRS)
        set(RAPIDJSON_INCLUDE_DIRS "${RapidJSON_INCLUDE_DIRS}")
      endif()
      set_target_properties(RapidJSON::RapidJSON PROPERTIES
        INTERFACE_INCLUDE_DIRECTORIES "${RAPIDJSON_INCLUDE_DIRS}")
    endif()
  endif()
endif()
