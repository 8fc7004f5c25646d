// SPDX-License-Identifier: MIT
#pragma once

// The two calls of Auto Scaling's Query API that forewarn makes for a lifecycle hook:
// CompleteLifecycleAction and RecordLifecycleActionHeartbeat, POSTed form-encoded
// (Version=2011-01-01) and signed with SigV4 (aws/sigv4.hpp), over a transport of their own: a
// public API, reached over HTTPS with the system's CAs and through the proxy the environment names
// (curl_transport_options::proxy_from_environment), unlike the metadata service. The AWS
// client's lifecycle hook (aws/lifecycle_hook.hpp) makes both. docs/aws.md ("Auto Scaling") has
// the permissions each call needs.

#include <forewarn/aws/credentials.hpp>
#include <forewarn/aws/sigv4.hpp>
#include <forewarn/clock.hpp>
#include <forewarn/config.hpp>
#include <forewarn/detail/function_ref.hpp>
#include <forewarn/detail/std_function.hpp>
#include <forewarn/log.hpp>
#include <forewarn/result.hpp>
#include <forewarn/transport.hpp>
#include <forewarn/transport/retry.hpp>

#include <chrono>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

FOREWARN_BEGIN_NAMESPACE
namespace aws {

/// https://autoscaling.REGION.amazonaws.com/ (".amazonaws.com.cn" in the China regions, cn-*).
std::string autoscaling_endpoint(std::string_view region);

/// What an AWS Query API's XML `ErrorResponse` says.
struct api_error {
    std::string type;     ///< Sender or Receiver
    std::string code;     ///< e.g. ValidationError, AccessDenied, Throttling, ExpiredToken
    std::string message;  ///< in AWS's words
    std::string request_id;
};

/**
 * An `<ErrorResponse>` read with a small bounded reader (no XML library): the first `<Code>`,
 * `<Message>`, `<Type>` and `<RequestId>` within the first 64 KiB, XML's five entities and
 * numeric references decoded, each value cut at 1 KiB. Nothing when the body is not one.
 */
std::optional<api_error> parse_error_response(std::string_view body);

/// `Action=ACTION&Version=2011-01-01` and the parameters, each encoded (uri_encode), in order.
std::string query_body(std::string_view action, std::initializer_list<std::pair<std::string_view, std::string_view>> params);

/// Which lifecycle action: the group, the hook and this instance.
struct lifecycle_action {
    std::string group;        ///< AutoScalingGroupName
    std::string hook;         ///< LifecycleHookName
    std::string instance_id;  ///< InstanceId
};

/// Where credentials come from: asked before each call (the source keeps them while they are
/// good); `refresh`: read them again, after an ExpiredToken answer.
using credentials_source = std::function<result<credentials>(bool refresh)>;

/// Options of basic_autoscaling_client.
struct autoscaling_options {
    std::string region;    ///< required: the region the group is in
    std::string endpoint;  ///< empty: autoscaling_endpoint(region); a VPC endpoint, or a test's server
    std::chrono::milliseconds timeout{std::chrono::seconds(15)};         ///< each request, whole
    std::chrono::milliseconds connect_timeout{std::chrono::seconds(5)};
    /// Throttling, 5xx and transport errors are tried again with backoff, up to this many tries.
    int max_attempts = 4;
    std::chrono::milliseconds initial_backoff{500};  ///< doubled each retry, jittered, at most 8 s
    forewarn::clock clock;  ///< for the backoff and the signature's time
    logger log;
};

}  // namespace aws

namespace detail {

/// One call: signed, sent, its answer read; retries and the credentials' refresh. `send` is the
/// transport's send; `sleep` the backoff's (its interrupt() cuts it short).
result<void> aws_autoscaling_call(forewarn::detail::function_ref<result<http_response>(const http_request&)> send,
                              const aws::autoscaling_options& o, const aws::credentials_source& creds, interruptible_sleep& sleep,
                              std::string_view action, const std::string& body);

/// The form of both actions' bodies.
std::string aws_lifecycle_body(std::string_view action, const aws::lifecycle_action& a, std::string_view result);

}  // namespace detail

namespace aws {

/**
 * CompleteLifecycleAction and RecordLifecycleActionHeartbeat over a Transport. Errors: the
 * API's ErrorResponse becomes errc::http_status with the status, and "CODE: Message" in the
 * message (AccessDenied says which IAM permission is missing, in AWS's words). Throttling and 5xx
 * are retried with backoff; ExpiredToken asks `creds` to refresh, then retries once. cancel() from
 * any thread ends a call promptly.
 */
template <class Transport>
class basic_autoscaling_client {
public:
    basic_autoscaling_client(autoscaling_options options, credentials_source creds, Transport transport = Transport())
        : options_(std::move(options)), creds_(std::move(creds)), transport_(std::move(transport)),
          sleep_(options_.clock) {
        if (options_.endpoint.empty() && !options_.region.empty()) options_.endpoint = autoscaling_endpoint(options_.region);
    }

    /// Lets the group go on: `result` CONTINUE (or ABANDON).
    result<void> complete_lifecycle_action(const lifecycle_action& a, std::string_view result = "CONTINUE") {
        return call("CompleteLifecycleAction", forewarn::detail::aws_lifecycle_body("CompleteLifecycleAction", a, result));
    }
    /// Restarts the hook's heartbeat timeout.
    result<void> record_lifecycle_action_heartbeat(const lifecycle_action& a) {
        return call("RecordLifecycleActionHeartbeat", forewarn::detail::aws_lifecycle_body("RecordLifecycleActionHeartbeat", a, {}));
    }

    void cancel() noexcept {
        sleep_.interrupt();
        transport_.cancel();
    }
    void reset() noexcept {
        sleep_.reset();
        transport_.reset();
    }
    const autoscaling_options& options() const noexcept { return options_; }
    Transport& transport() noexcept { return transport_; }

private:
    result<void> call(std::string_view action, const std::string& body) {
        if (options_.region.empty()) return error(errc::invalid_argument, "Auto Scaling: no region");
        return forewarn::detail::aws_autoscaling_call([this](const http_request& r) { return transport_.send(r); }, options_, creds_,
                                        sleep_, action, body);
    }

    autoscaling_options options_;
    credentials_source creds_;
    Transport transport_;
    interruptible_sleep sleep_;
};

}  // namespace aws
FOREWARN_END_NAMESPACE

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/aws/autoscaling-inl.hpp>
#endif
