# SPDX-License-Identifier: MIT
# cmake -DNM=nm -DOBJECTS=a.o;b.o -P check_extern.cmake: fails when a consumer's object file in
# compiled mode defines a member function of a poller or client that libforewarn holds (the
# extern template declarations did not reach it, so it compiled them again), or one of the
# non-template functions whose bodies only libforewarn compiles (FOREWARN_HEADER_DEFINITIONS):
# the consumer calls azure::parse_document and error::describe, and must get them from the library.
foreach(obj IN LISTS OBJECTS)
  execute_process(COMMAND "${NM}" -C --defined-only "${obj}" OUTPUT_VARIABLE symbols RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM} failed on ${obj}")
  endif()
  string(REGEX MATCHALL "[^\n]*(basic_poller<[^\n]*::start\\(\\)|basic_scheduled_events_client<forewarn::v[0-9]+::curl_transport>::fetch\\(\\)|forewarn::v[0-9]+::azure::parse_document\\(|forewarn::v[0-9]+::error::describe)[^\n]*" found "${symbols}")
  if(found)
    message(FATAL_ERROR "${obj} compiled what libforewarn holds:\n${found}")
  endif()
  message(STATUS "${obj}: nothing libforewarn holds compiled again")
endforeach()
