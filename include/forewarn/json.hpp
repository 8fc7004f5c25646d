// SPDX-License-Identifier: MIT
#pragma once

/**
 * forewarn's one JSON form of an `event` and a `change`: what forewarn-watch prints, what the
 * state file keeps, and what a service can log or ship. Reading it back gives the same event.
 *
 * An event:
 * @code
 * {"id":"C7061BAC-...","type":"freeze","raw_type":"Freeze","status":"scheduled",
 *  "raw_status":"Scheduled","resource_type":"VirtualMachine","resources":["WestNO_0"],
 *  "not_before":"2022-04-11T22:26:58Z","description":"...","source":"platform",
 *  "raw_source":"Platform","duration_s":5}
 * @endcode
 * `type`, `status` and `source` are forewarn's cloud-neutral names (to_string()), the `raw_`
 * members the wire words. `not_before` is ISO-8601 UTC (with a fraction when it has one) or
 * null; `source` null (and no `raw_source`) when the service sent none; `duration_s` as sent
 * (-1: the service does not know) or null when not sent.
 *
 * A document is `{"cloud":..., "incarnation":..., "service_time": ISO-8601 or null, "events":[...]}`
 * with each event in the form above.
 *
 * A change is the event's members after `"change"` (prepare | started | recover | updated) and
 * `"cloud"`, then for a recover `"reason"` (completed | cancelled | unknown), `"evidence"`
 * (what decided it, in words), `"observed_pause_s"` (the longest pause this process saw while the
 * event was Started, in seconds to the millisecond, or null when it did not watch it Started) and
 * `"observed_pause_seen_by"` ("monotonic" | "wall" | null: which clock saw it), then
 * `"incarnation"`.
 */

#include <forewarn/config.hpp>
#include <forewarn/diff.hpp>
#include <forewarn/event.hpp>
#include <forewarn/result.hpp>
#include <forewarn/time.hpp>

#include <string>
#include <string_view>

FOREWARN_BEGIN_NAMESPACE

/// How to write text that is not valid UTF-8 (possible in a metadata value sent as plain text, not
/// JSON): JSON cannot hold it.
enum class invalid_utf8 {
    fail,     ///< an error (the state file: nothing is written that would not read back the same)
    replace,  ///< each bad byte as U+FFFD (log lines: one line per change, whatever it holds)
};

/// The event as one JSON object (see the top of json.hpp).
result<std::string> to_json(const event& e, invalid_utf8 bad = invalid_utf8::fail);

/// The change as one JSON object: what forewarn-watch --json prints per line.
result<std::string> to_json(const change& c, invalid_utf8 bad = invalid_utf8::fail);

/// The document as one JSON object (see the top of json.hpp): what `forewarn-fetch-once --json`
/// prints.
result<std::string> to_json(const document& d, invalid_utf8 bad = invalid_utf8::fail);

/**
 * `text` as one JSON string, quotes and escapes included: for a JSON line of your own that holds
 * what a metadata service sent (an event id, a VM name), which may not be valid UTF-8 (an error,
 * or each bad byte as U+FFFD with invalid_utf8::replace).
 * @code
 * std::cout << "{\"draining\":" << forewarn::json_string(c.event.id, forewarn::invalid_utf8::replace).value() << "}\n";
 * @endcode
 */
result<std::string> json_string(std::string_view text, invalid_utf8 bad = invalid_utf8::fail);

/// An event back from its JSON object. Unknown members are ignored (a newer writer may add some).
result<event> event_from_json(std::string_view text);

/// A change back from its JSON object (`previous` is not part of the form).
result<change> change_from_json(std::string_view text);

FOREWARN_END_NAMESPACE

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/json-inl.hpp>
#endif
