# SPDX-License-Identifier: MIT
# Makes a RapidJSON::RapidJSON target. RapidJSON 1.1.0's own config (Debian, most distros) sets
# RAPIDJSON_INCLUDE_DIRS but defines no target, newer ones define RapidJSON or RapidJSON::RapidJSON,
# and some installs have no config at all: cover the three. Used by the build (through
# forewarnDependencies.cmake) and installed next to forewarnConfig.cmake for consumers. No
# include_guard: imported targets are per directory, and the TARGET test already guards it.

if(NOT TARGET RapidJSON::RapidJSON)
  find_package(RapidJSON CONFIG QUIET)
  if(NOT TARGET RapidJSON::RapidJSON AND TARGET RapidJSON)
    # An ALIAS of an imported target needs it to be global; an interface wrapper works everywhere.
    add_library(RapidJSON::RapidJSON INTERFACE IMPORTED)
    set_target_properties(RapidJSON::RapidJSON PROPERTIES INTERFACE_LINK_LIBRARIES RapidJSON)
  elseif(NOT TARGET RapidJSON::RapidJSON)
    set(_forewarn_rapidjson_dirs "")
    if(RAPIDJSON_INCLUDE_DIRS)
      set(_forewarn_rapidjson_dirs "${RAPIDJSON_INCLUDE_DIRS}")
    elseif(RapidJSON_INCLUDE_DIRS)
      set(_forewarn_rapidjson_dirs "${RapidJSON_INCLUDE_DIRS}")
    else()
      find_path(FOREWARN_RAPIDJSON_INCLUDE_DIR rapidjson/document.h)
      if(FOREWARN_RAPIDJSON_INCLUDE_DIR)
        set(_forewarn_rapidjson_dirs "${FOREWARN_RAPIDJSON_INCLUDE_DIR}")
      endif()
    endif()
    if(_forewarn_rapidjson_dirs)
      add_library(RapidJSON::RapidJSON INTERFACE IMPORTED)
      set_target_properties(RapidJSON::RapidJSON PROPERTIES
        INTERFACE_INCLUDE_DIRECTORIES "${_forewarn_rapidjson_dirs}")
    endif()
    unset(_forewarn_rapidjson_dirs)
  endif()
endif()
