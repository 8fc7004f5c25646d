# SPDX-License-Identifier: MIT
# forewarn_warnings(target): the warning set every first-party target is built with.
include_guard(GLOBAL)

option(FOREWARN_WERROR "Treat warnings as errors in forewarn's own targets" OFF)

# forewarn_warning_flags(out_var): the flags themselves, for targets CMake generates.
function(forewarn_warning_flags out_var)
  if(MSVC)
    set(flags /W4 /permissive-)
    if(FOREWARN_WERROR)
      list(APPEND flags /WX)
    endif()
  else()
    set(flags -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion)
    if(FOREWARN_WERROR)
      list(APPEND flags -Werror)
    endif()
  endif()
  set(${out_var} "${flags}" PARENT_SCOPE)
endfunction()

function(forewarn_warnings target)
  forewarn_warning_flags(flags)
  target_compile_options(${target} PRIVATE ${flags})
endfunction()
