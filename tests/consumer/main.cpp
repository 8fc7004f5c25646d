// SPDX-License-Identifier: MIT
// A program outside forewarn's tree: parses a Scheduled Events document through the installed
// (or fetched) package, prints it, and exits non-zero when the result is not the expected one.
#include <forewarn/forewarn.hpp>

#include "check.hpp"

// Compiled mode: the headers give a user declarations only, so RapidJSON (the definitions' JSON
// parser) must not reach this file.
#if defined(FOREWARN_COMPILED_LIB) && defined(RAPIDJSON_VERSION_STRING)
#error "compiled mode: <forewarn/forewarn.hpp> brought RapidJSON into a user's translation unit"
#endif

// Compiled mode: nor libcurl (transport/curl_handles.hpp is the definitions'), nor the standard
// headers that only forewarn's definitions use (docs/benchmarks.md, "Narrow includes"). The
// standard headers are told by libstdc++'s include guards; other libraries are not checked.
#if defined(FOREWARN_COMPILED_LIB) && defined(CURLINC_CURL_H)
#error "compiled mode: <forewarn/forewarn.hpp> brought libcurl into a user's translation unit"
#endif
#if defined(FOREWARN_COMPILED_LIB) && \
    (defined(_GLIBCXX_UNORDERED_MAP) || defined(_GLIBCXX_DEQUE) || defined(_GLIBCXX_ALGORITHM))
#error "compiled mode: <forewarn/forewarn.hpp> brought <unordered_map>, <deque> or <algorithm> into a user's translation unit"
#endif
#if defined(FOREWARN_COMPILED_LIB) && defined(FOREWARN_STD_FUNCTION_ONLY) && defined(_GLIBCXX_FUNCTIONAL)
#error "compiled mode: <forewarn/forewarn.hpp> brought all of <functional> into a user's translation unit"
#endif

// On Windows the default transport is WinHTTP: nothing of libcurl reaches a user's program.
#if defined(_WIN32) && defined(CURLINC_CURL_H)
#error "on Windows, <forewarn/forewarn.hpp> brought libcurl into a user's translation unit"
#endif

#include <cstdio>
#include <string>

namespace {

constexpr const char* body = R"({
  "DocumentIncarnation": 7,
  "Events": [
    { "EventId": "C7061BAC-AFDC-4513-B24B-AA5F13A16123", "EventType": "Freeze",
      "ResourceType": "VirtualMachine", "Resources": ["WestNO_0", "WestNO_1"],
      "EventStatus": "Scheduled", "NotBefore": "Mon, 11 Apr 2022 22:26:58 GMT",
      "Description": "memory-preserving maintenance", "EventSource": "Platform",
      "DurationInSeconds": 5 },
    { "EventId": "2", "EventType": "Reboot", "ResourceType": "VirtualMachine",
      "Resources": ["WestNO_1"], "EventStatus": "Started", "NotBefore": "",
      "EventSource": "User", "DurationInSeconds": -1 }
  ]
})";

consumer::checks check{"forewarn-consumer"};

}  // namespace

int main() {
    std::printf("forewarn %s\n", FOREWARN_VERSION_STRING);

    const auto doc = forewarn::azure::parse_document(body);
    if (!doc) {
        std::fprintf(stderr, "forewarn-consumer: parse failed: %s\n", doc.error().describe().c_str());
        return 1;
    }
    std::printf("incarnation %s, %zu event(s)\n", doc->incarnation.c_str(), doc->events.size());
    for (const auto& e : doc->events) {
        const std::string type(forewarn::to_string(e.type));
        const std::string status(forewarn::to_string(e.status));
        std::printf("  %s %s %s resources=%zu not_before=%s\n", e.id.c_str(), type.c_str(), status.c_str(),
                    e.resources.size(), e.not_before ? "set" : "none");
    }

    check(doc->origin == forewarn::cloud::azure, "origin is azure");
    check(doc->incarnation == "7", "incarnation is 7");
    check(doc->events.size() == 2, "two events");
    if (doc->events.size() == 2) {
        const auto& freeze = doc->events[0];
        check(freeze.type == forewarn::event_type::freeze, "first event is a freeze");
        check(freeze.status == forewarn::event_status::scheduled, "first event is scheduled");
        check(freeze.not_before.has_value(), "first event has NotBefore");
        check(freeze.affects("WestNO_0") && !freeze.affects("WestNO_2"), "first event's resources");
        check(freeze.duration() == std::chrono::seconds(5), "first event lasts 5 s");
        const auto& reboot = doc->events[1];
        check(reboot.type == forewarn::event_type::reboot, "second event is a reboot");
        check(reboot.status == forewarn::event_status::started, "second event has started");
        check(!reboot.not_before.has_value(), "an empty NotBefore is no time");
        check(!reboot.duration().has_value(), "DurationInSeconds -1 is no duration");
    }

    // Bad input is an error value, never a crash.
    const auto bad = forewarn::azure::parse_document(R"({"DocumentIncarnation": "x", "Events": []})");
    check(!bad, "a string DocumentIncarnation is rejected");
    if (!bad) std::printf("rejected as expected: %s\n", bad.error().describe().c_str());

    // The default transport (libcurl; WinHTTP on Windows) is really linked: a transport is
    // created, and a cancelled one refuses to send (sticky cancel) without touching the network.
    forewarn::default_transport transport;
    transport.cancel();
    forewarn::http_request request;
    request.url = "http://127.0.0.1:9/";
    const auto sent = transport.send(request);
    check(!sent && sent.error().code == forewarn::errc::cancelled, "a cancelled default_transport returns errc::cancelled");

    // A poller over the default client, started and stopped (in compiled mode both come from
    // libforewarn). Nothing listens on port 9: the first poll fails and stop() ends it promptly.
    forewarn::azure::client_options options;
    options.endpoint = "http://127.0.0.1:9";
    options.self_name = "WestNO_0";
    forewarn::poller_handlers handlers;
    forewarn::poller<forewarn::azure::scheduled_events_client> poller(forewarn::azure::scheduled_events_client(options),
                                                                      handlers);
    const auto started = poller.start();
    check(started.has_value(), "the poller starts");
    poller.stop();
    check(!poller.running(), "the poller stops");
#if defined(FOREWARN_COMPILED_LIB)
    std::printf("mode: compiled (libforewarn)\n");
#else
    std::printf("mode: header-only\n");
#endif

    return check.finish();
}
