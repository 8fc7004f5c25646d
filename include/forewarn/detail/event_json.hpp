// SPDX-License-Identifier: MIT
#pragma once

// An event as the members of a JSON object, over RapidJSON: the one form json.hpp defines,
// shared by json.hpp's definitions, the state file and the fleet budget. Not part of the umbrella
// header's compiled-mode declarations (it includes RapidJSON).

#include <forewarn/config.hpp>
#include <forewarn/detail/json.hpp>
#include <forewarn/event.hpp>
#include <forewarn/result.hpp>
#include <forewarn/time.hpp>

#include <string>
#include <string_view>

FOREWARN_BEGIN_NAMESPACE

namespace detail {

/// The event's members into an object `w` has begun.
void write_event_members(json_writer& w, const event& e);

result<std::string> json_optional_string(const rapidjson::Value& obj, const char* name, const std::string& where);

/// An event from the members of a JSON object (as write_event_members writes them).
result<event> read_event(const rapidjson::Value& v, const std::string& where);

result<std::string> json_text(const json_writer& w);

}  // namespace detail

FOREWARN_END_NAMESPACE

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/detail/event_json-inl.hpp>
#endif
