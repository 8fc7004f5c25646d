# SPDX-License-Identifier: MIT
# cmake -P script run by ctest: compiles tests/consumer/main.cpp with nothing but
# `pkg-config --cflags --libs forewarn` from an installed prefix, then runs it.
# -D PKG_CONFIG=... -D PREFIX=... -D PCDIR=... -D CXX=... -D STD=17 -D SOURCE=... -D OUT=...
foreach(v IN ITEMS PKG_CONFIG PREFIX PCDIR CXX STD SOURCE OUT)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "pkgconfig.cmake: -D ${v}=... is required")
  endif()
endforeach()

# Only the installed forewarn.pc (plus the system's libcurl.pc and RapidJSON.pc) may be seen.
set(ENV{PKG_CONFIG_PATH} "${PCDIR}")

function(run out_var)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
    OUTPUT_STRIP_TRAILING_WHITESPACE)
  string(REPLACE ";" " " cmd "${ARGN}")
  message(STATUS "$ ${cmd}\n${out}${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${cmd}")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

run(ignored "${PKG_CONFIG}" --validate forewarn)
run(version "${PKG_CONFIG}" --modversion forewarn)
run(includedir "${PKG_CONFIG}" --variable=includedir forewarn)
file(REAL_PATH "${includedir}" includedir)
file(REAL_PATH "${PREFIX}" prefix)
string(FIND "${includedir}/" "${prefix}/" at)
if(NOT EXISTS "${includedir}/forewarn/forewarn.hpp" OR NOT at EQUAL 0)
  message(FATAL_ERROR "forewarn.pc's includedir ${includedir} is not the installed one under ${prefix}")
endif()
get_filename_component(out_dir "${OUT}" DIRECTORY)
file(MAKE_DIRECTORY "${out_dir}")
run(flags "${PKG_CONFIG}" --cflags --libs forewarn)
separate_arguments(flags UNIX_COMMAND "${flags}")
run(ignored "${CXX}" -std=c++${STD} -Wall -Wextra -Wpedantic -Werror "${SOURCE}" -o "${OUT}" ${flags})
# A compiled (shared) libforewarn is found where the .pc file says it is, as a user's launcher would.
run(libdir "${PKG_CONFIG}" --variable=libdir forewarn)
if(libdir)
  set(ENV{LD_LIBRARY_PATH} "${libdir}:$ENV{LD_LIBRARY_PATH}")
endif()
run(output "${OUT}")
if(NOT output MATCHES "forewarn-consumer: OK")
  message(FATAL_ERROR "the program built with pkg-config flags did not report OK")
endif()
# The .pc file says which mode the install is: -DFOREWARN_COMPILED_LIB and -lforewarn, or neither.
if(flags MATCHES "-lforewarn")
  if(NOT flags MATCHES "-DFOREWARN_COMPILED_LIB" OR NOT output MATCHES "mode: compiled")
    message(FATAL_ERROR "forewarn.pc links libforewarn but does not pass FOREWARN_COMPILED_LIB")
  endif()
elseif(NOT output MATCHES "mode: header-only")
  message(FATAL_ERROR "forewarn.pc is header-only but the program did not build header-only")
endif()
