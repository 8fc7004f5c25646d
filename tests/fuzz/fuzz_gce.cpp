// SPDX-License-Identifier: MIT
// libFuzzer target: GCE value parsing (maintenance-event, preempted), the ETag join/split that
// makes a document's incarnation, key and endpoint normalisation, and the whole metadata client
// over a scripted transport whose answers (status, flavor header, ETag, body) are fuzzed.
// Invariants: no crash, hang, leak or UB; the value parsers agree with the protocol's rules;
// split_etags(join_etags(a, b)) == (a, b); an encoded key holds only unreserved bytes, '/' and
// %XX; every request carries Metadata-Flavor: Google and goes to the configured endpoint; a
// fetched document has GCE origin and at most the three events of its keys (maintenance-event,
// preempted, upcoming-maintenance: read by default, so its answers are fuzzed too).
#include <forewarn/gce/metadata_client.hpp>
#include <forewarn/testing/fake_transport.hpp>

#include "fuzz_check.hpp"

#include <fuzzer/FuzzedDataProvider.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace {

namespace gce = forewarn::gce;
namespace fd = forewarn::detail;
using forewarn::errc;

bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F'); }

void values(const std::string& v) {
    const auto trimmed = forewarn::detail::trim(v);
    auto m = gce::maintenance_event_from(v);
    if (trimmed.empty()) {
        FOREWARN_FUZZ_CHECK(!m && m.error().code == errc::empty_body, "empty maintenance-event accepted");
    } else if (forewarn::detail::iequals(trimmed, "NONE")) {
        FOREWARN_FUZZ_CHECK(m && !*m, "NONE gave an event");
    } else {
        FOREWARN_FUZZ_CHECK(m && *m, "a maintenance value gave no event");
        const auto& e = **m;
        FOREWARN_FUZZ_CHECK(e.id == "maintenance-event:" + std::string(trimmed), "synthetic id");
        FOREWARN_FUZZ_CHECK(e.status == forewarn::event_status::scheduled, "maintenance event not scheduled");
    }
    auto p = gce::preempted_event_from(v);
    if (forewarn::detail::iequals(trimmed, "TRUE")) {
        FOREWARN_FUZZ_CHECK(p && *p && (*p)->id == "preempted", "TRUE did not give the preempted event");
    } else if (forewarn::detail::iequals(trimmed, "FALSE")) {
        FOREWARN_FUZZ_CHECK(p && !*p, "FALSE gave an event");
    } else {
        FOREWARN_FUZZ_CHECK(!p && !p.error().message.empty(), "a preempted value other than TRUE/FALSE accepted");
    }
}

void key_and_endpoint(const std::string& s) {
    if (auto k = fd::gce_encode_key(s)) {
        const std::string& e = *k;
        for (std::size_t i = 0; i < e.size(); ++i) {
            const char c = e[i];
            if (c == '%') {
                FOREWARN_FUZZ_CHECK(i + 2 < e.size() && is_hex(e[i + 1]) && is_hex(e[i + 2]), "bad percent escape");
                i += 2;
                continue;
            }
            FOREWARN_FUZZ_CHECK(fd::gce_is_unreserved(c) || c == '/', "a key byte left unencoded");
        }
        FOREWARN_FUZZ_CHECK(e.rfind("//", 0) != 0, "a key that becomes a network path");
    }
    if (auto n = fd::gce_normalize_endpoint(s, "fuzz")) {
        const std::string& u = *n;
        FOREWARN_FUZZ_CHECK(!u.empty() && u.back() != '/', "endpoint keeps a trailing '/'");
        FOREWARN_FUZZ_CHECK(!forewarn::detail::url_authority(u).empty(), "endpoint without a host");
        const auto scheme = u.substr(0, u.find("://"));
        FOREWARN_FUZZ_CHECK(forewarn::detail::iequals(scheme, "http") || forewarn::detail::iequals(scheme, "https"),
                            "endpoint with another scheme");
        for (const char c : u) {
            const auto b = static_cast<unsigned char>(c);
            FOREWARN_FUZZ_CHECK(b > 0x20 && b != 0x7F && c != '?' && c != '#' && c != '\\', "endpoint byte");
        }
    }
}

void client(FuzzedDataProvider& in) {
    forewarn::testing::fake_transport t;
    const int answers = in.ConsumeIntegralInRange(0, 12);
    for (int i = 0; i < answers; ++i) {
        if (in.ConsumeBool() && in.ConsumeBool()) {
            t.fail(forewarn::error(in.ConsumeBool() ? errc::transport : errc::timeout, "fuzzed failure"));
            continue;
        }
        static constexpr int statuses[] = {200, 200, 200, 200, 404, 429, 500, 503, 302, 0, 599};
        const int status = statuses[in.ConsumeIntegralInRange<std::size_t>(0, std::size(statuses) - 1)];
        forewarn::http_headers headers;
        if (!in.ConsumeBool() || in.ConsumeBool())
            headers.push_back({"Metadata-Flavor", in.ConsumeBool() ? "Google" : in.ConsumeRandomLengthString(16)});
        if (in.ConsumeBool()) headers.push_back({"ETag", in.ConsumeRandomLengthString(24)});
        t.respond(status, in.ConsumeRandomLengthString(256), std::move(headers));
    }
    forewarn::gce::client_options o;
    o.endpoint = "http://127.0.0.1:9";
    o.rate_limit = false;
    o.retry.max_attempts = 2;
    o.retry.initial_backoff = std::chrono::milliseconds(0);
    o.retry.max_backoff = std::chrono::milliseconds(0);
    o.error_pause = std::chrono::milliseconds(0);
    o.self_name = in.ConsumeBool() ? std::string() : std::string("vm-fuzz");
    forewarn::gce::basic_metadata_client<forewarn::testing::fake_transport> c(o, t);

    auto check_doc = [](const forewarn::result<forewarn::document>& d) {
        if (!d) {
            FOREWARN_FUZZ_CHECK(!d.error().message.empty(), "client error without a message");
            return;
        }
        FOREWARN_FUZZ_CHECK(d->origin == forewarn::cloud::gce, "GCE document with another origin");
        FOREWARN_FUZZ_CHECK(d->events.size() <= 3, "more than the three keys' events");
        for (const auto& e : d->events)
            FOREWARN_FUZZ_CHECK(e.id == "preempted" || e.id == "upcoming-maintenance" || e.id.rfind("maintenance-event:", 0) == 0,
                                "unexpected event id");
    };
    // The first next() reads plainly (after instance/name unless self_name); the second one hangs
    // (or pauses after a failure) until the script runs out, when the fake transport fails.
    check_doc(c.next());
    check_doc(c.next());
    auto id = c.identity();
    if (!id) FOREWARN_FUZZ_CHECK(!id.error().message.empty(), "identity error without a message");

    for (const auto& r : t.requests()) {
        const std::string* flavor = forewarn::find_header(r.headers, "Metadata-Flavor");
        FOREWARN_FUZZ_CHECK(flavor && *flavor == "Google", "a GCE request without Metadata-Flavor: Google");
        FOREWARN_FUZZ_CHECK(r.url.rfind("http://127.0.0.1:9/computeMetadata/v1/", 0) == 0, "request to another place");
        FOREWARN_FUZZ_CHECK(forewarn::find_header(r.headers, "X-Forwarded-For") == nullptr, "X-Forwarded-For sent");
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    FuzzedDataProvider in(data, size);
    const std::string a = in.ConsumeRandomLengthString(512);
    values(a);
    key_and_endpoint(a);
    client(in);
    return 0;
}
