// SPDX-License-Identifier: MIT
#pragma once

// SHA-256 (FIPS 180-4) and HMAC-SHA-256 (RFC 2104), for signing a cloud's API requests. Written
// here rather than taken from the platform's libcrypto or BCrypt so that signing stays header-only
// and links nothing on any system; docs/architecture.md says why. Checked against FIPS 180-4's
// examples and RFC 4231's HMAC test cases (tests/unit/test_sha256.cpp). Not constant-time
// comparison material: it hashes what a client sends, it never verifies a secret.

#include <forewarn/config.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

FOREWARN_BEGIN_NAMESPACE
namespace detail {

using sha256_digest = std::array<unsigned char, 32>;

/// Incremental SHA-256: update() any number of times, then finish() once.
class sha256 {
public:
    sha256() noexcept;
    void update(const void* data, std::size_t size) noexcept;
    void update(std::string_view s) noexcept { update(s.data(), s.size()); }
    sha256_digest finish() noexcept;

private:
    void block(const unsigned char* p) noexcept;

    std::uint32_t h_[8];
    unsigned char buf_[64];
    std::size_t used_ = 0;
    std::uint64_t total_ = 0;  // bytes
};

/// SHA-256 of `data`.
sha256_digest sha256_of(std::string_view data) noexcept;

/// HMAC-SHA-256 of `message` under `key`.
sha256_digest hmac_sha256(std::string_view key, std::string_view message) noexcept;

/// Lowercase hex of `bytes`.
std::string hex_lower(const unsigned char* bytes, std::size_t n);
inline std::string hex_lower(const sha256_digest& d) { return hex_lower(d.data(), d.size()); }

/// The digest's bytes as a string (an HMAC key for the next step of a key derivation).
inline std::string_view as_bytes(const sha256_digest& d) noexcept {
    return {reinterpret_cast<const char*>(d.data()), d.size()};
}

}  // namespace detail
FOREWARN_END_NAMESPACE

#if FOREWARN_HEADER_DEFINITIONS
#include <forewarn/detail/sha256-inl.hpp>
#endif
