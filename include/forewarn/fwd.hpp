// SPDX-License-Identifier: MIT
#pragma once

// Forward declarations: a user's header can name forewarn's types without pulling in libcurl
// or RapidJSON.

#include <forewarn/config.hpp>

FOREWARN_BEGIN_NAMESPACE

enum class errc;
struct error;
template <class T>
class result;
class bad_result_access;

enum class cloud;
enum class event_type;
enum class event_status;
enum class event_source;
struct event;
struct document;

enum class http_method;
struct http_header;
struct http_request;
struct http_response;
template <class T, class>
struct is_transport;

class curl_transport;
struct curl_transport_options;
class winhttp_transport;
struct winhttp_transport_options;

/// The transport the clients use when none is named: WinHTTP on Windows (no libcurl needed),
/// libcurl elsewhere. <forewarn/transport/default.hpp> (or forewarn.hpp) defines it. The one
/// place that chooses by platform, with detail/extern_templates.hpp and default_transport.hpp.
#if defined(_WIN32)
using default_transport = winhttp_transport;
#else
using default_transport = curl_transport;
#endif

struct retry_options;
class retry_policy;
class rate_limiter;
class clock;
class interruptible_sleep;
enum class log_level;
struct log_record;
struct logger;
template <class S, class>
struct is_notice_source;

struct detect_options;
struct detection;

enum class change_kind;
enum class recover_reason;
struct change;
struct tracking_options;
class change_tracker;
enum class leader_rule;
class leader_election;
enum class approval_scope;
struct approval_options;
class approval_policy;
enum class approval_state;
struct approval_status;
class approval_handle;
class approver;
struct local_event;
struct coordinator_context;
class approval_coordinator;
struct saved_event;
struct poller_state;
class state_store;
class state_file;
struct poller_handlers;
struct poller_options;
struct poller_health;
template <class Source>
class basic_poller;

namespace testing {
class manual_clock;
class fake_transport;
class fake_source;
class scenario;
struct scenario_config;
struct scenario_step;
struct azure_event_spec;
struct fault_spec;
struct vm_identity;
struct emulated_response;
class simulated_transport;
}  // namespace testing

namespace gce {
struct client_options;
struct get_options;
struct metadata_value;
struct instance_identity;
template <class Transport = default_transport>
class basic_metadata_client;
using metadata_client = basic_metadata_client<>;
}  // namespace gce

namespace azure {
struct client_options;
struct instance_identity;
template <class Transport>
class basic_scheduled_events_client;
}  // namespace azure

namespace aws {
struct client_options;
struct instance_identity;
template <class Transport>
class basic_instance_metadata_client;
}  // namespace aws

FOREWARN_END_NAMESPACE
