# SPDX-License-Identifier: MIT
# forewarn_warnings(target): the warning set every first-party target is built with.
include_guard(GLOBAL)

option(FOREWARN_WERROR "Treat warnings as errors in forewarn's own targets" OFF)

function(forewarn_warnings target)
  if(MSVC)
    target_compile_options(${target} PRIVATE /W4 /permissive-)
    if(FOREWARN_WERROR)
      target_compile_options(${target} PRIVATE /WX)
    endif()
  else()
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion)
    if(FOREWARN_WERROR)
      target_compile_options(${target} PRIVATE -Werror)
    endif()
  endif()
endfunction()
