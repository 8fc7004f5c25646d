# SPDX-License-Identifier: MIT
# forewarn-readme-example: the README's first program, cut out of README.md at configure time and
# compiled (never run: it would talk to a real metadata service) with the warnings of every other
# first-party target, so an API change that breaks the README breaks the build.
include_guard(GLOBAL)

set(_forewarn_readme "${PROJECT_SOURCE_DIR}/README.md")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_forewarn_readme}")
file(READ "${_forewarn_readme}" _forewarn_text)
string(REGEX MATCH "<!-- readme-example: begin -->\n```cpp\n(.*)\n```\n<!-- readme-example: end -->"
  _forewarn_match "${_forewarn_text}")
if(NOT _forewarn_match)
  message(FATAL_ERROR "README.md has no ```cpp block between the readme-example markers")
endif()
set(_forewarn_out "${PROJECT_BINARY_DIR}/readme/first_program.cpp")
# Written only when it changes, so an unrelated README edit recompiles nothing.
file(WRITE "${_forewarn_out}.tmp" "// SPDX-License-Identifier: MIT\n// Generated from README.md: edit it there.\n${CMAKE_MATCH_1}\n")
file(COPY_FILE "${_forewarn_out}.tmp" "${_forewarn_out}" ONLY_IF_DIFFERENT)

add_executable(forewarn-readme-example "${_forewarn_out}")
target_link_libraries(forewarn-readme-example PRIVATE forewarn::forewarn)
forewarn_warnings(forewarn-readme-example)
unset(_forewarn_readme)
unset(_forewarn_text)
unset(_forewarn_match)
unset(_forewarn_out)
