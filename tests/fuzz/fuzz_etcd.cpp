// SPDX-License-Identifier: MIT
// libFuzzer target: etcd's JSON gateway as forewarn reads and writes it (etcd/wire.hpp). The first
// byte picks what is fuzzed. Invariants: no crash, hang, leak or UB; base64 decodes what it
// encodes; a range answer that parses is read back the same after writing it again; the other
// answers (leases, transactions, a watch's messages, versions, tokens, errors) fail with a message
// or parse; every request body forewarn writes is well-formed JSON, whatever bytes its keys and
// values hold.
#include <forewarn/detail/json.hpp>
#include <forewarn/etcd/wire.hpp>

#include "fuzz_check.hpp"

#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <string>

using namespace forewarn::etcd;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const int mode = data[0] % 4;
    FuzzedDataProvider in(data + 1, size - 1);
    switch (mode) {
    case 0: {
        const std::string text = in.ConsumeRemainingBytesAsString();
        auto back = base64_decode(base64_encode(text));
        FOREWARN_FUZZ_CHECK(back && *back == text, "base64 round trip");
        if (auto d = base64_decode(text)) {
            auto again = base64_decode(base64_encode(*d));
            FOREWARN_FUZZ_CHECK(again && *again == *d, "base64 of decoded text");
        } else {
            FOREWARN_FUZZ_CHECK(!d.error().message.empty(), "error without a message");
        }
        break;
    }
    case 1: {
        const std::string body = in.ConsumeRemainingBytesAsString();
        auto r = parse_range(body);
        if (!r) {
            FOREWARN_FUZZ_CHECK(!r.error().message.empty(), "error without a message");
            break;
        }
        // Written again as the gateway would, it reads back the same.
        forewarn::detail::json_writer w;
        w.begin_object();
        w.key("header");
        w.begin_object();
        wire::write_int(w, "revision", r->revision);
        w.end_object();
        w.key("kvs");
        w.begin_array();
        for (const auto& kv : r->kvs) {
            w.begin_object();
            wire::write_bytes(w, "key", kv.key);
            wire::write_bytes(w, "value", kv.value);
            wire::write_int(w, "create_revision", kv.create_revision);
            wire::write_int(w, "mod_revision", kv.mod_revision);
            wire::write_int(w, "version", kv.version);
            wire::write_int(w, "lease", kv.lease);
            w.end_object();
        }
        w.end_array();
        w.end_object();
        FOREWARN_FUZZ_CHECK(w.complete(), "a parsed range writes back");
        auto again = parse_range(w.view());
        FOREWARN_FUZZ_CHECK(again && again->revision == r->revision && again->kvs.size() == r->kvs.size(), "range round trip");
        for (std::size_t i = 0; i < r->kvs.size(); ++i) {
            const auto& a = r->kvs[i];
            const auto& b = again->kvs[i];
            FOREWARN_FUZZ_CHECK(a.key == b.key && a.value == b.value && a.lease == b.lease &&
                                    a.create_revision == b.create_revision && a.mod_revision == b.mod_revision,
                                "key round trip");
        }
        break;
    }
    case 2: {
        const std::string body = in.ConsumeRemainingBytesAsString();
        if (auto l = parse_lease(body); !l) FOREWARN_FUZZ_CHECK(!l.error().message.empty(), "lease error without a message");
        if (auto t = parse_txn(body); !t) FOREWARN_FUZZ_CHECK(!t.error().message.empty(), "txn error without a message");
        if (auto w = parse_watch_response(body); !w) FOREWARN_FUZZ_CHECK(!w.error().message.empty(), "watch error without a message");
        if (auto v = parse_version(body); v) FOREWARN_FUZZ_CHECK(!api_prefix(v->server).empty(), "a prefix for every version");
        (void)parse_auth_token(body);
        int code = 0;
        (void)parse_error_message(body, &code);
        break;
    }
    default: {
        const std::string key = in.ConsumeRandomLengthString(64);
        const std::string value = in.ConsumeRemainingBytesAsString();
        txn_request t;
        t.compares.push_back({compare::target::mod, compare::op::less, key, prefix_end(key), 7, {}});
        t.compares.push_back({compare::target::value, compare::op::equal, key, {}, 0, value});
        t.success.push_back({operation::kind::put, key, value, 42});
        t.failure.push_back({operation::kind::remove, key, {}, 0});
        t.success.push_back({operation::kind::range, key, {}, 0, value, true});
        for (const std::string& body : {write_txn(t), write_range(key, value), write_put(key, value, 9),
                                        write_watch_create(key, value, 5, true, true)}) {
            auto doc = forewarn::detail::parse_json(body);
            FOREWARN_FUZZ_CHECK(doc && doc->IsObject(), "a request body is a JSON object");
        }
        break;
    }
    }
    return 0;
}
