// SPDX-License-Identifier: MIT
#pragma once

// AWS Signature Version 4: signs an http_request for an AWS API (Auto Scaling's lifecycle actions,
// or any other call a program makes). Usable on its own; the AWS client's header includes it
// (its lifecycle hook signs), and a program that never signs generates none of its code. Checked against AWS's published SigV4 test suite
// (tests/unit/data/sigv4/, every case that normalizes its path: the canonical request, the string
// to sign and the signature). SHA-256 and HMAC are forewarn's own (detail/sha256.hpp): signing
// links nothing new.

#include <forewarn/aws/credentials.hpp>
#include <forewarn/config.hpp>
#include <forewarn/result.hpp>
#include <forewarn/transport.hpp>

#include <chrono>
#include <optional>
#include <string>

FOREWARN_BEGIN_NAMESPACE
namespace aws {

/// What a signature is for, and how.
struct sigv4_options {
    std::string region;   ///< e.g. "us-east-1"
    std::string service;  ///< e.g. "autoscaling"
    /// Also send and sign X-Amz-Content-Sha256 (S3 needs it; the Query APIs do not).
    bool sign_body = false;
    /// Remove "." and ".." segments and repeated slashes from the path before signing (every
    /// service but S3).
    bool normalize_path = true;
    /// Sign the X-Amz-Security-Token header (the usual way). false: send it unsigned, added after
    /// the signature (what a few services ask for).
    bool sign_session_token = true;
};

/// What signing computed: the three steps of the algorithm and the header it produced.
struct sigv4_signature {
    std::string canonical_request;
    std::string string_to_sign;
    std::string signature;      ///< lowercase hex
    std::string authorization;  ///< the Authorization header's value
};

/**
 * Signs `req` for the time `when`. It adds Host (from the URL, unless the request has one),
 * X-Amz-Date, X-Amz-Security-Token (with a session token), X-Amz-Content-Sha256 (`sign_body`) and
 * Authorization; every header of the request is signed. The body is signed as it is: set it
 * (and its Content-Type) before signing, and change nothing after.
 *
 * errc::invalid_argument, with `req` unchanged: a URL that is not absolute http(s), no region,
 * service, key id or secret, a header value holding CR or LF, or a request already signed
 * (Authorization or X-Amz-Date present).
 */
result<sigv4_signature> sign_v4(http_request& req, const credentials& creds, const sigv4_options& options,
                                std::chrono::system_clock::time_point when);

/// "20150830T123600Z": the form of X-Amz-Date.
std::string amz_date(std::chrono::system_clock::time_point t);

/// RFC 3986 percent-encoding as SigV4 wants it: unreserved characters (A-Z a-z 0-9 - . _ ~) as they
/// are, every other byte %XX in uppercase hex; '/' kept when `keep_slash`. Form bodies of the Query
/// APIs use it too.
std::string uri_encode(std::string_view s, bool keep_slash = false);

}  // namespace aws
FOREWARN_END_NAMESPACE

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/aws/sigv4-inl.hpp>
#endif
