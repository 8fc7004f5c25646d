# SPDX-License-Identifier: MIT
# cmake -P script run by ctest (fixture setup): installs this build into a fresh prefix, so a
# header deleted from the tree cannot linger there, and checks the files a consumer needs.
# -D BUILD_DIR=... -D PREFIX=... -D INCLUDEDIR=... -D CMAKEDIR=... -D PCDIR=... [-D CONFIG=...]
# [-D EMULATOR=ON -D BINDIR=...]
foreach(v IN ITEMS BUILD_DIR PREFIX INCLUDEDIR CMAKEDIR PCDIR)
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
foreach(f IN ITEMS ${INCLUDEDIR}/forewarn/forewarn.hpp ${INCLUDEDIR}/forewarn/config.hpp
                   ${CMAKEDIR}/forewarnConfig.cmake ${CMAKEDIR}/forewarnConfigVersion.cmake
                   ${CMAKEDIR}/forewarnTargets.cmake ${CMAKEDIR}/forewarnRapidJSON.cmake ${PCDIR}/forewarn.pc)
  if(NOT EXISTS "${PREFIX}/${f}")
    message(FATAL_ERROR "the install lacks ${f}")
  endif()
endforeach()
# The emulator module's headers always; the program when the build made it (-D EMULATOR=ON).
set(emulator_files ${INCLUDEDIR}/forewarn/testing/scenario.hpp ${INCLUDEDIR}/forewarn/testing/emulator/engine.hpp)
if(EMULATOR)
  if(NOT DEFINED BINDIR)
    message(FATAL_ERROR "install.cmake: -D EMULATOR=ON needs -D BINDIR=...")
  endif()
  list(APPEND emulator_files ${BINDIR}/forewarn-emulator ${CMAKEDIR}/forewarnEmulatorTargets.cmake)
endif()
foreach(f IN LISTS emulator_files)
  if(NOT EXISTS "${PREFIX}/${f}")
    message(FATAL_ERROR "the install lacks ${f}")
  endif()
endforeach()
if(EMULATOR)
  execute_process(COMMAND "${PREFIX}/${BINDIR}/forewarn-emulator" --help RESULT_VARIABLE rc OUTPUT_VARIABLE out)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "usage: forewarn-emulator")
    message(FATAL_ERROR "the installed forewarn-emulator does not run (${rc}): ${out}")
  endif()
endif()
