// SPDX-License-Identifier: MIT
#pragma once

// etcd v3's JSON gateway, as bytes: the request bodies forewarn sends and the answers it reads
// (no client, no I/O). Keys and values travel base64-encoded; 64-bit integers travel as decimal
// strings (read as numbers too); a member whose value is zero is left out by the gateway, so a
// missing number reads as 0 and a missing "succeeded" as false.

#include <forewarn/config.hpp>
#include <forewarn/detail/json.hpp>
#include <forewarn/result.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

FOREWARN_BEGIN_NAMESPACE
namespace etcd {

/// Standard base64 with padding (RFC 4648 section 4), as the gateway wants `bytes` fields.
inline std::string base64_encode(std::string_view in) {
    static constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    out.reserve((in.size() + 2) / 3 * 4);
    std::size_t i = 0;
    for (; i + 3 <= in.size(); i += 3) {
        const std::uint32_t v = (std::uint32_t(std::uint8_t(in[i])) << 16) | (std::uint32_t(std::uint8_t(in[i + 1])) << 8) |
                                std::uint32_t(std::uint8_t(in[i + 2]));
        out += alphabet[(v >> 18) & 63];
        out += alphabet[(v >> 12) & 63];
        out += alphabet[(v >> 6) & 63];
        out += alphabet[v & 63];
    }
    if (const std::size_t left = in.size() - i; left > 0) {
        std::uint32_t v = std::uint32_t(std::uint8_t(in[i])) << 16;
        if (left == 2) v |= std::uint32_t(std::uint8_t(in[i + 1])) << 8;
        out += alphabet[(v >> 18) & 63];
        out += alphabet[(v >> 12) & 63];
        out += left == 2 ? alphabet[(v >> 6) & 63] : '=';
        out += '=';
    }
    return out;
}

/// Decodes standard base64 (padding optional); anything else is a parse_error.
inline result<std::string> base64_decode(std::string_view in) {
    auto value_of = [](char c) -> int {
        if (c >= 'A' && c <= 'Z') return c - 'A';
        if (c >= 'a' && c <= 'z') return c - 'a' + 26;
        if (c >= '0' && c <= '9') return c - '0' + 52;
        if (c == '+') return 62;
        if (c == '/') return 63;
        return -1;
    };
    while (!in.empty() && in.back() == '=') in.remove_suffix(1);
    if (in.size() % 4 == 1) return error(errc::parse_error, "base64 text of impossible length");
    std::string out;
    out.reserve(in.size() * 3 / 4);
    std::uint32_t acc = 0;
    int bits = 0;
    for (const char c : in) {
        const int v = value_of(c);
        if (v < 0) return error(errc::parse_error, "not base64 text");
        acc = (acc << 6) | std::uint32_t(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out += static_cast<char>((acc >> bits) & 0xFF);
        }
    }
    return out;
}

/// The range_end that selects every key starting with `prefix` (etcd's "prefix end").
inline std::string prefix_end(std::string_view prefix) {
    std::string end(prefix);
    while (!end.empty()) {
        auto& last = reinterpret_cast<unsigned char&>(end.back());
        if (last < 0xFF) {
            ++last;
            return end;
        }
        end.pop_back();
    }
    return std::string(1, '\0');  // every key
}

/// One key as a range answer holds it.
struct key_value {
    std::string key;
    std::string value;
    std::int64_t create_revision = 0;
    std::int64_t mod_revision = 0;
    std::int64_t version = 0;
    std::int64_t lease = 0;
};

/// A range answer: the store's revision when it was read and the keys, in the order asked.
struct range_result {
    std::int64_t revision = 0;
    std::vector<key_value> kvs;
};

/// A lease as grant, keepalive and timetolive report it; ttl <= 0: the lease is gone.
struct lease {
    std::int64_t id = 0;
    std::int64_t ttl = 0;
};

/// A condition of a transaction (etcdserverpb.Compare): `target` of the key (or of every key in
/// [key, range_end) when range_end is set) compared with `number` or `value`.
struct compare {
    enum class target { create, mod, version, value };
    enum class op { equal, greater, less, not_equal };
    target what = target::mod;
    op result = op::equal;
    std::string key;
    std::string range_end;
    std::int64_t number = 0;
    std::string value;
};

/// One operation of a transaction: a put (with a lease, 0 for none), a delete, or a read of one
/// key or of [key, range_end).
struct operation {
    enum class kind { put, remove, range };
    kind what = kind::put;
    std::string key;
    std::string value;
    std::int64_t lease = 0;
    std::string range_end{};  ///< range only
    bool keys_only = false;   ///< range only: the keys and their revisions, no values
    std::int64_t limit = 0;   ///< range only: at most this many keys (0: all)
    bool newest_first = false;  ///< range only: ordered by create revision, newest first (else by key)
    std::int64_t max_create_revision = 0;  ///< range only: only keys created at or before it (0: any)
};

/// A transaction: if every compare holds, `success` runs, else `failure`.
struct txn_request {
    std::vector<compare> compares;
    std::vector<operation> success;
    std::vector<operation> failure;
};

/// What a transaction did, with what its range operations read (in their order) at `revision`.
struct txn_result {
    std::int64_t revision = 0;
    bool succeeded = false;
    std::vector<range_result> ranges;
};

/// etcd's version answer (GET /version).
struct server_version {
    std::string server;   ///< "etcdserver", e.g. "3.4.23"
    std::string cluster;  ///< "etcdcluster", e.g. "3.4.0"
};

/// The gateway's path prefix for a server version: "/v3" from 3.4 on, "/v3beta" for 3.3.
inline std::string api_prefix(std::string_view server) {
    // Numbers are capped (a server's text is network input: "99999999999.1" must not overflow).
    int major = 0, minor = 0;
    std::size_t i = 0;
    auto number = [&](int& out) {
        for (; i < server.size() && server[i] >= '0' && server[i] <= '9'; ++i) out = (std::min)(out * 10 + (server[i] - '0'), 100000);
    };
    number(major);
    if (i < server.size() && server[i] == '.') ++i;
    number(minor);
    return (major > 3 || (major == 3 && minor >= 4)) ? "/v3" : "/v3beta";
}

namespace wire {

inline const char* to_wire(compare::target t) noexcept {
    switch (t) {
    case compare::target::create: return "CREATE";
    case compare::target::mod: return "MOD";
    case compare::target::version: return "VERSION";
    case compare::target::value: return "VALUE";
    }
    return "MOD";
}
inline const char* to_wire(compare::op o) noexcept {
    switch (o) {
    case compare::op::equal: return "EQUAL";
    case compare::op::greater: return "GREATER";
    case compare::op::less: return "LESS";
    case compare::op::not_equal: return "NOT_EQUAL";
    }
    return "EQUAL";
}

// int64 fields go out as decimal strings: JSON numbers lose precision above 2^53 in many readers.
inline void write_int(detail::json_writer& w, std::string_view name, std::int64_t v) {
    w.key(name);
    w.string(std::to_string(v));
}
inline void write_bytes(detail::json_writer& w, std::string_view name, std::string_view bytes) {
    w.key(name);
    w.string(base64_encode(bytes));
}

// A range request's fields beyond its key (etcdserverpb.RangeRequest).
inline void write_range_fields(detail::json_writer& w, const operation& op) {
    if (!op.range_end.empty()) write_bytes(w, "range_end", op.range_end);
    if (op.keys_only) {
        w.key("keys_only");
        w.boolean(true);
    }
    if (op.limit > 0) write_int(w, "limit", op.limit);
    if (op.newest_first) {
        w.key("sort_order");
        w.string("DESCEND");
        w.key("sort_target");
        w.string("CREATE");
    }
    if (op.max_create_revision > 0) write_int(w, "max_create_revision", op.max_create_revision);
}

inline void write_operation(detail::json_writer& w, const operation& op) {
    w.begin_object();
    if (op.what == operation::kind::put) {
        w.key("request_put");
        w.begin_object();
        write_bytes(w, "key", op.key);
        write_bytes(w, "value", op.value);
        if (op.lease != 0) write_int(w, "lease", op.lease);
        w.end_object();
    } else {
        w.key(op.what == operation::kind::range ? "request_range" : "request_delete_range");
        w.begin_object();
        write_bytes(w, "key", op.key);
        if (op.what == operation::kind::range) write_range_fields(w, op);
        w.end_object();
    }
    w.end_object();
}

/// An int64 member: a decimal string (what the gateway writes) or an integer; missing is 0.
inline result<std::int64_t> read_int(const rapidjson::Value& obj, const char* name, const std::string& where) {
    const auto* v = detail::json_member(obj, name);
    if (!v) return std::int64_t{0};
    if (v->IsInt64()) return v->GetInt64();
    if (!v->IsString()) return detail::json_type_error(where + name, "an integer or a decimal string", *v);
    const auto s = detail::json_string_view(*v);
    std::int64_t out = 0;
    bool negative = false;
    std::size_t i = 0;
    if (!s.empty() && s[0] == '-') {
        negative = true;
        i = 1;
    }
    if (i == s.size() || s.size() - i > 19) return detail::json_shape_error(where + name, "not a 64-bit decimal integer");
    for (; i < s.size(); ++i) {
        if (s[i] < '0' || s[i] > '9') return detail::json_shape_error(where + name, "not a 64-bit decimal integer");
        const int d = s[i] - '0';
        if (out > (INT64_MAX - d) / 10) return detail::json_shape_error(where + name, "a 64-bit integer out of range");
        out = out * 10 + d;
    }
    return negative ? -out : out;
}

/// A `bytes` member (base64); missing is empty.
inline result<std::string> read_bytes(const rapidjson::Value& obj, const char* name, const std::string& where) {
    const auto* v = detail::json_member(obj, name);
    if (!v) return std::string();
    if (!v->IsString()) return detail::json_type_error(where + name, "a base64 string", *v);
    auto decoded = base64_decode(detail::json_string_view(*v));
    if (!decoded) return detail::json_shape_error(where + name, decoded.error().message);
    return decoded;
}

/// The answer's body as an object.
inline result<rapidjson::Document> read_object(std::string_view body) {
    if (body.empty()) return error(errc::empty_body, "etcd answered with an empty body");
    auto doc = detail::parse_json(body);
    if (!doc) return doc.error();
    if (!doc->IsObject()) return detail::json_type_error("", "an object", *doc);
    return doc;
}

inline result<std::int64_t> read_revision(const rapidjson::Value& obj) {
    const auto* header = detail::json_member(obj, "header");
    if (!header) return std::int64_t{0};
    if (!header->IsObject()) return detail::json_type_error("header", "an object", *header);
    return read_int(*header, "revision", "header.");
}

// A mvccpb.KeyValue object (in a range answer's kvs, in a watch event's kv).
inline result<key_value> read_key_value(const rapidjson::Value& item, const std::string& where) {
    key_value kv;
    auto key = read_bytes(item, "key", where);
    if (!key) return key.error();
    auto value = read_bytes(item, "value", where);
    if (!value) return value.error();
    kv.key = std::move(*key);
    kv.value = std::move(*value);
    for (auto [name, slot] : {std::pair<const char*, std::int64_t*>{"create_revision", &kv.create_revision},
                              {"mod_revision", &kv.mod_revision},
                              {"version", &kv.version},
                              {"lease", &kv.lease}}) {
        auto n = read_int(item, name, where);
        if (!n) return n.error();
        *slot = *n;
    }
    return kv;
}

}  // namespace wire

/// {"key":..,"range_end":..}: one key, or [key, range_end) when range_end is not empty; with
/// `keys_only`, the keys and their revisions without the values.
inline std::string write_range(std::string_view key, std::string_view range_end = {}, bool keys_only = false) {
    detail::json_writer w;
    w.begin_object();
    wire::write_bytes(w, "key", key);
    operation op{operation::kind::range, {}, {}, 0, std::string(range_end), keys_only};
    wire::write_range_fields(w, op);
    w.end_object();
    return w.str();
}

inline std::string write_put(std::string_view key, std::string_view value, std::int64_t lease_id = 0) {
    detail::json_writer w;
    w.begin_object();
    wire::write_bytes(w, "key", key);
    wire::write_bytes(w, "value", value);
    if (lease_id != 0) wire::write_int(w, "lease", lease_id);
    w.end_object();
    return w.str();
}

inline std::string write_delete(std::string_view key) { return write_range(key); }

/// {"TTL":..} for lease/grant; {"ID":..} for keepalive, revoke and timetolive.
inline std::string write_lease_grant(std::int64_t ttl_seconds) {
    detail::json_writer w;
    w.begin_object();
    wire::write_int(w, "TTL", ttl_seconds);
    w.end_object();
    return w.str();
}
inline std::string write_lease_id(std::int64_t id) {
    detail::json_writer w;
    w.begin_object();
    wire::write_int(w, "ID", id);
    w.end_object();
    return w.str();
}

inline std::string write_txn(const txn_request& t) {
    detail::json_writer w;
    w.begin_object();
    w.key("compare");
    w.begin_array();
    for (const auto& c : t.compares) {
        w.begin_object();
        w.key("target");
        w.string(wire::to_wire(c.what));
        w.key("result");
        w.string(wire::to_wire(c.result));
        wire::write_bytes(w, "key", c.key);
        if (!c.range_end.empty()) wire::write_bytes(w, "range_end", c.range_end);
        switch (c.what) {
        case compare::target::create: wire::write_int(w, "create_revision", c.number); break;
        case compare::target::mod: wire::write_int(w, "mod_revision", c.number); break;
        case compare::target::version: wire::write_int(w, "version", c.number); break;
        case compare::target::value: wire::write_bytes(w, "value", c.value); break;
        }
        w.end_object();
    }
    w.end_array();
    w.key("success");
    w.begin_array();
    for (const auto& op : t.success) wire::write_operation(w, op);
    w.end_array();
    w.key("failure");
    w.begin_array();
    for (const auto& op : t.failure) wire::write_operation(w, op);
    w.end_array();
    w.end_object();
    return w.str();
}

/// {"name":..,"password":..} for auth/authenticate (the password is never logged).
inline result<std::string> write_authenticate(std::string_view name, std::string_view password) {
    detail::json_writer w;
    w.begin_object();
    w.key("name");
    w.string(name);
    w.key("password");
    w.string(password);
    w.end_object();
    if (!w.complete()) return error(errc::invalid_argument, "the etcd user name and password must be UTF-8");
    return w.str();
}

/// The revision of a put or delete answer.
inline result<std::int64_t> parse_header_revision(std::string_view body) {
    auto doc = wire::read_object(body);
    if (!doc) return doc.error();
    return wire::read_revision(*doc);
}

namespace wire {
// A range answer's object (the body, or a transaction's response_range), its revision given.
inline result<range_result> read_range(const rapidjson::Value& obj, std::int64_t revision, const std::string& where) {
    range_result out;
    out.revision = revision;
    const auto* kvs = detail::json_member(obj, "kvs");
    if (!kvs) return out;
    if (!kvs->IsArray()) return detail::json_type_error(where + "kvs", "an array", *kvs);
    for (rapidjson::SizeType i = 0; i < kvs->Size(); ++i) {
        const auto& item = (*kvs)[i];
        const std::string at = where + "kvs[" + std::to_string(i) + "]";
        if (!item.IsObject()) return detail::json_type_error(at, "an object", item);
        auto kv = read_key_value(item, at + ".");
        if (!kv) return kv.error();
        out.kvs.push_back(std::move(*kv));
    }
    return out;
}
}  // namespace wire

inline result<range_result> parse_range(std::string_view body) {
    auto doc = wire::read_object(body);
    if (!doc) return doc.error();
    auto rev = wire::read_revision(*doc);
    if (!rev) return rev.error();
    return wire::read_range(*doc, *rev, "");
}

/// lease/grant and lease/timetolive answer at the top level; lease/keepalive inside "result".
inline result<lease> parse_lease(std::string_view body) {
    auto doc = wire::read_object(body);
    if (!doc) return doc.error();
    const rapidjson::Value* obj = doc.operator->();
    std::string where;
    if (const auto* r = detail::json_member(*doc, "result")) {
        if (!r->IsObject()) return detail::json_type_error("result", "an object", *r);
        obj = r;
        where = "result.";
    }
    if (const auto* e = detail::json_member(*obj, "error"); e && e->IsString() && e->GetStringLength() > 0)
        return error(errc::invalid_document, "etcd: " + std::string(detail::json_string_view(*e)));
    lease out;
    auto id = wire::read_int(*obj, "ID", where);
    if (!id) return id.error();
    auto ttl = wire::read_int(*obj, "TTL", where);
    if (!ttl) return ttl.error();
    out.id = *id;
    out.ttl = *ttl;
    return out;
}

inline result<txn_result> parse_txn(std::string_view body) {
    auto doc = wire::read_object(body);
    if (!doc) return doc.error();
    txn_result out;
    auto rev = wire::read_revision(*doc);
    if (!rev) return rev.error();
    out.revision = *rev;
    if (const auto* s = detail::json_member(*doc, "succeeded")) {
        if (!s->IsBool()) return detail::json_type_error("succeeded", "a boolean", *s);
        out.succeeded = s->GetBool();
    }
    const auto* responses = detail::json_member(*doc, "responses");
    if (!responses) return out;
    if (!responses->IsArray()) return detail::json_type_error("responses", "an array", *responses);
    for (rapidjson::SizeType i = 0; i < responses->Size(); ++i) {
        const auto& item = (*responses)[i];
        const std::string where = "responses[" + std::to_string(i) + "]";
        if (!item.IsObject()) return detail::json_type_error(where, "an object", item);
        const auto* range = detail::json_member(item, "response_range");
        if (!range) continue;  // a put's or a delete's answer
        if (!range->IsObject()) return detail::json_type_error(where + ".response_range", "an object", *range);
        auto r = wire::read_range(*range, out.revision, where + ".response_range.");
        if (!r) return r.error();
        out.ranges.push_back(std::move(*r));
    }
    return out;
}

inline result<server_version> parse_version(std::string_view body) {
    auto doc = wire::read_object(body);
    if (!doc) return doc.error();
    server_version out;
    const auto* s = detail::json_member(*doc, "etcdserver");
    if (!s || !s->IsString())
        return s ? detail::json_type_error("etcdserver", "a string", *s)
                 : detail::json_shape_error("etcdserver", "missing: this is not etcd's /version");
    out.server = std::string(detail::json_string_view(*s));
    if (const auto* c = detail::json_member(*doc, "etcdcluster"); c && c->IsString())
        out.cluster = std::string(detail::json_string_view(*c));
    return out;
}

inline result<std::string> parse_auth_token(std::string_view body) {
    auto doc = wire::read_object(body);
    if (!doc) return doc.error();
    const auto* t = detail::json_member(*doc, "token");
    if (!t || !t->IsString() || t->GetStringLength() == 0)
        return detail::json_shape_error("token", "etcd's authenticate answer has no token");
    return std::string(detail::json_string_view(*t));
}

/// {"create_request":{..}} for /watch: every change to [key, range_end) from `start_revision` on
/// (only deletions with `deletes_only`: etcd's NOPUT filter), with the server's progress
/// notifications (a heartbeat while nothing changes) when asked.
inline std::string write_watch_create(std::string_view key, std::string_view range_end, std::int64_t start_revision,
                                      bool progress_notify = true, bool deletes_only = false) {
    detail::json_writer w;
    w.begin_object();
    w.key("create_request");
    w.begin_object();
    wire::write_bytes(w, "key", key);
    if (!range_end.empty()) wire::write_bytes(w, "range_end", range_end);
    if (start_revision > 0) wire::write_int(w, "start_revision", start_revision);
    if (progress_notify) {
        w.key("progress_notify");
        w.boolean(true);
    }
    if (deletes_only) {
        w.key("filters");
        w.begin_array();
        w.string("NOPUT");
        w.end_array();
    }
    w.end_object();
    w.end_object();
    return w.str();
}

/// One change a watch reports: a put (the key's new value and revisions) or a delete (the key, and
/// the delete's revision in kv.mod_revision).
struct watch_event {
    bool deleted = false;
    key_value kv;
};

/// One message of a watch stream. `canceled`: the watch is over (a compaction past its start
/// revision sets compact_revision: read afresh, then watch again from that read).
struct watch_response {
    std::int64_t revision = 0;  ///< the store's revision when the message was sent
    bool created = false;
    bool canceled = false;
    std::int64_t compact_revision = 0;
    std::string cancel_reason;
    std::vector<watch_event> events;
};

/// One line of the gateway's watch stream: {"result":{..}}, or {"error":{..}} as an error.
inline result<watch_response> parse_watch_response(std::string_view line) {
    auto doc = wire::read_object(line);
    if (!doc) return doc.error();
    if (const auto* e = detail::json_member(*doc, "error")) {
        std::string text;
        if (e->IsObject()) {
            if (const auto* m = detail::json_member(*e, "message"); m && m->IsString())
                text = detail::replace_invalid_utf8(detail::json_string_view(*m));
        } else if (e->IsString()) {
            text = detail::replace_invalid_utf8(detail::json_string_view(*e));
        }
        return error(errc::invalid_document, "etcd ended the watch: " + (text.empty() ? std::string("an error") : text));
    }
    const auto* r = detail::json_member(*doc, "result");
    if (!r) return detail::json_shape_error("result", "missing: not a watch message");
    if (!r->IsObject()) return detail::json_type_error("result", "an object", *r);
    watch_response out;
    auto rev = wire::read_revision(*r);
    if (!rev) return rev.error();
    out.revision = *rev;
    for (auto [name, flag] : {std::pair<const char*, bool*>{"created", &out.created}, {"canceled", &out.canceled}}) {
        if (const auto* b = detail::json_member(*r, name)) {
            if (!b->IsBool()) return detail::json_type_error(std::string("result.") + name, "a boolean", *b);
            *flag = b->GetBool();
        }
    }
    auto compact = wire::read_int(*r, "compact_revision", "result.");
    if (!compact) return compact.error();
    out.compact_revision = *compact;
    if (const auto* reason = detail::json_member(*r, "cancel_reason"); reason && reason->IsString())
        out.cancel_reason = detail::replace_invalid_utf8(detail::json_string_view(*reason));
    const auto* events = detail::json_member(*r, "events");
    if (!events) return out;
    if (!events->IsArray()) return detail::json_type_error("result.events", "an array", *events);
    for (rapidjson::SizeType i = 0; i < events->Size(); ++i) {
        const auto& item = (*events)[i];
        const std::string where = "result.events[" + std::to_string(i) + "]";
        if (!item.IsObject()) return detail::json_type_error(where, "an object", item);
        watch_event ev;
        if (const auto* type = detail::json_member(item, "type")) {
            if (!type->IsString()) return detail::json_type_error(where + ".type", "a string", *type);
            const auto t = detail::json_string_view(*type);
            if (t == "DELETE") ev.deleted = true;
            else if (t != "PUT") return detail::json_shape_error(where + ".type", "neither PUT nor DELETE");
        }
        const auto* kv = detail::json_member(item, "kv");
        if (!kv || !kv->IsObject()) return detail::json_shape_error(where + ".kv", "missing or not an object");
        auto read = wire::read_key_value(*kv, where + ".kv.");
        if (!read) return read.error();
        ev.kv = std::move(*read);
        out.events.push_back(std::move(ev));
    }
    return out;
}

/// The message of an error answer ({"error":..,"message":..,"code":N}), or "" when there is none.
inline std::string parse_error_message(std::string_view body, int* code = nullptr) {
    auto doc = detail::parse_json(body);
    if (!doc || !doc->IsObject()) return {};
    if (code)
        if (const auto* c = detail::json_member(*doc, "code"); c && c->IsInt()) *code = c->GetInt();
    for (const char* name : {"message", "error"})
        if (const auto* m = detail::json_member(*doc, name); m && m->IsString())
            return detail::replace_invalid_utf8(detail::json_string_view(*m));
    return {};
}

}  // namespace etcd
FOREWARN_END_NAMESPACE
