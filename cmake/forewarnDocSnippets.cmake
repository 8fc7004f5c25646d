# SPDX-License-Identifier: MIT
# forewarn_doc_snippets(PLATFORM posix|windows [LIBS ...]): every ```cpp block of docs/*.md for
# that platform, cut out at configure time by tests/docs/snippets.py and compiled (never run): a
# block with main() an executable of its own, the others one object library. An API change that
# breaks a page breaks the build. tests/docs/ (Linux) and tests/windows/ call it.
include_guard(GLOBAL)
find_package(Python3 REQUIRED COMPONENTS Interpreter)

function(forewarn_doc_snippets)
  cmake_parse_arguments(ARG "" "PLATFORM" "LIBS" ${ARGN})
  file(GLOB pages CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/docs/*.md")
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${pages} "${PROJECT_SOURCE_DIR}/tests/docs/snippets.py")
  set(out "${PROJECT_BINARY_DIR}/doc-snippets")
  execute_process(COMMAND "${Python3_EXECUTABLE}" "${PROJECT_SOURCE_DIR}/tests/docs/snippets.py"
                          "${PROJECT_SOURCE_DIR}/docs" "${out}" ${ARG_PLATFORM}
                  OUTPUT_VARIABLE listing ERROR_VARIABLE problems RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "docs/: ${problems}")
  endif()
  string(REPLACE "\n" ";" listing "${listing}")
  foreach(entry IN LISTS listing)
    if(entry MATCHES "^program (.+)$")
      string(REPLACE "_" "-" target "forewarn-doc-${CMAKE_MATCH_1}")
      add_executable(${target} "${out}/${CMAKE_MATCH_1}.cpp")
      target_link_libraries(${target} PRIVATE ${ARG_LIBS})
      forewarn_warnings(${target})
    elseif(entry STREQUAL "combined")
      add_library(forewarn_doc_snippets OBJECT "${out}/combined.cpp")
      target_link_libraries(forewarn_doc_snippets PRIVATE ${ARG_LIBS})
      forewarn_warnings(forewarn_doc_snippets)
      # A page shows a handler's parameter it does not use, or a result it leaves to the reader.
      target_compile_options(forewarn_doc_snippets PRIVATE -Wno-unused-parameter -Wno-unused-variable
                                                           -Wno-unused-but-set-variable)
    endif()
  endforeach()
endfunction()
