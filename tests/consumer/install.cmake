# SPDX-License-Identifier: MIT
# cmake -P script run by ctest (fixture setup): installs this build into a fresh prefix, so a
# header deleted from the tree cannot linger there. -D BUILD_DIR=... -D PREFIX=... [-D CONFIG=...]
foreach(v IN ITEMS BUILD_DIR PREFIX)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "install.cmake: -D ${v}=... is required")
  endif()
endforeach()
file(REMOVE_RECURSE "${PREFIX}")
set(config_args "")
if(CONFIG)
  set(config_args --config "${CONFIG}")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${PREFIX}" ${config_args}
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install ${BUILD_DIR} --prefix ${PREFIX} failed (${rc})")
endif()
foreach(f IN ITEMS include/forewarn/forewarn.hpp share/cmake/forewarn/forewarnConfig.cmake
                   share/cmake/forewarn/forewarnConfigVersion.cmake share/cmake/forewarn/forewarnTargets.cmake
                   share/cmake/forewarn/forewarnRapidJSON.cmake share/pkgconfig/forewarn.pc)
  if(NOT EXISTS "${PREFIX}/${f}")
    message(FATAL_ERROR "the install lacks ${f}")
  endif()
endforeach()
