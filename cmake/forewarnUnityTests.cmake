# SPDX-License-Identifier: MIT
# forewarn_test_unity(target): CI's trees (docs/building.md, "Which tree checks what") compile the
# test programs as unity builds, FOREWARN_UNITY_BATCH sources to a translation unit: each batch
# parses Catch2 and forewarn's headers, and instantiates the clients and pollers, once instead of
# once per file. Off in the debug tree, which compiles each file alone so that a missing #include
# fails there. Catch's main and the translation units whose point is to be alone (include_all.cpp:
# every header in a second unit; include_testing_first.cpp: an include order; test_hidden.cpp: a
# definition file's -inl.hpp, which in compiled mode no other test file sees) stay out of the
# batches: forewarn_test_unity marks them on the target's own sources.
include_guard(GLOBAL)

option(FOREWARN_UNITY_TESTS "Compile the test programs as unity builds (CI's sanitizer and compiled trees; the Windows tree's link took longer with them)" OFF)
set(FOREWARN_UNITY_BATCH 8 CACHE STRING "Sources per translation unit of a unity test program")

function(forewarn_test_unity target)
  if(NOT FOREWARN_UNITY_TESTS)
    return()
  endif()
  set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE ${FOREWARN_UNITY_BATCH})
  get_target_property(sources ${target} SOURCES)
  foreach(source IN LISTS sources)
    if(source MATCHES "(^|/)(catch_main|include_all|include_testing_first|test_hidden)\\.cpp$")
      set_source_files_properties("${source}" TARGET_DIRECTORY ${target} PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
    endif()
  endforeach()
endfunction()
