# SPDX-License-Identifier: MIT
# forewarn-readme-NAME: each README program between "<!-- readme-example: NAME begin -->" and
# "<!-- readme-example: NAME end -->", cut out of README.md at configure time and compiled (never
# run: it would talk to a real metadata service) with the warnings of every other first-party
# target, so an API change that breaks the README breaks the build.
include_guard(GLOBAL)

function(forewarn_readme_examples)
  set(readme "${PROJECT_SOURCE_DIR}/README.md")
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${readme}")
  file(READ "${readme}" text)
  string(REGEX MATCHALL "<!-- readme-example: [a-z_]+ begin -->" begins "${text}")
  if(NOT begins)
    message(FATAL_ERROR "README.md has no readme-example blocks")
  endif()
  foreach(begin IN LISTS begins)
    string(REGEX REPLACE "<!-- readme-example: ([a-z_]+) begin -->" "\\1" name "${begin}")
    # Cut at the markers with string(FIND): a regex would need to stop at '<!--' but not at the
    # '<' of an #include.
    string(FIND "${text}" "${begin}" from)
    string(FIND "${text}" "<!-- readme-example: ${name} end -->" to)
    if(to LESS from)
      message(FATAL_ERROR "README.md: readme-example ${name} has no end marker")
    endif()
    math(EXPR len "${to} - ${from}")
    string(SUBSTRING "${text}" ${from} ${len} block)
    if(NOT block MATCHES "```cpp\n(.*)\n```")
      message(FATAL_ERROR "README.md: readme-example ${name} holds no ```cpp block")
    endif()
    set(code "${CMAKE_MATCH_1}")
    set(out "${PROJECT_BINARY_DIR}/readme/${name}.cpp")
    # Written only when it changes, so an unrelated README edit recompiles nothing.
    file(WRITE "${out}.tmp" "// SPDX-License-Identifier: MIT\n// Generated from README.md: edit it there.\n${code}\n")
    file(COPY_FILE "${out}.tmp" "${out}" ONLY_IF_DIFFERENT)
    string(REPLACE "_" "-" target "forewarn-readme-${name}")
    add_executable(${target} "${out}")
    target_link_libraries(${target} PRIVATE forewarn::forewarn)
    forewarn_warnings(${target})
  endforeach()
endfunction()

forewarn_readme_examples()
