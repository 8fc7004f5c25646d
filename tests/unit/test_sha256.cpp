// SPDX-License-Identifier: MIT
// SHA-256 against FIPS 180-4's examples and HMAC-SHA-256 against RFC 4231's test cases: the
// digests SigV4 signing is built on (detail/sha256.hpp).
#include <forewarn/detail/sha256.hpp>

#include "catch.hpp"

#include <string>

namespace test_sha256 {  // this file's own names, apart in a unity build (cmake/forewarnUnityTests.cmake)

using forewarn::detail::hex_lower;
using forewarn::detail::hmac_sha256;
using forewarn::detail::sha256;
using forewarn::detail::sha256_of;

TEST_CASE("sha256: FIPS 180-4's examples, and the empty message", "[sha256]") {
    CHECK(hex_lower(sha256_of("abc")) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    CHECK(hex_lower(sha256_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")) ==
          "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    CHECK(hex_lower(sha256_of("")) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    sha256 million;
    const std::string thousand(1000, 'a');
    for (int i = 0; i < 1000; ++i) million.update(thousand);
    CHECK(hex_lower(million.finish()) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("sha256: fed in pieces of any size, the digest is the one of the whole", "[sha256]") {
    std::string text;
    for (int i = 0; i < 300; ++i) text += static_cast<char>(i * 7 + 3);
    for (std::size_t piece : {1u, 3u, 55u, 56u, 63u, 64u, 65u, 127u}) {
        sha256 s;
        for (std::size_t at = 0; at < text.size(); at += piece) s.update(std::string_view(text).substr(at, piece));
        INFO("pieces of " << piece);
        CHECK(hex_lower(s.finish()) == hex_lower(sha256_of(text)));
    }
    // Lengths around the padding's edge (55, 56 and 64 bytes need one or two final blocks).
    CHECK(hex_lower(sha256_of(std::string(55, 'a'))) == "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
    CHECK(hex_lower(sha256_of(std::string(56, 'a'))) == "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
    CHECK(hex_lower(sha256_of(std::string(64, 'a'))) == "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

TEST_CASE("hmac_sha256: RFC 4231's test cases 1 to 7", "[sha256]") {
    CHECK(hex_lower(hmac_sha256(std::string(20, '\x0b'), "Hi There")) ==
          "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
    CHECK(hex_lower(hmac_sha256("Jefe", "what do ya want for nothing?")) ==
          "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    CHECK(hex_lower(hmac_sha256(std::string(20, '\xaa'), std::string(50, '\xdd'))) ==
          "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
    std::string key4;
    for (char c = 1; c <= 25; ++c) key4 += c;
    CHECK(hex_lower(hmac_sha256(key4, std::string(50, '\xcd'))) ==
          "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");
    CHECK(hex_lower(hmac_sha256(std::string(20, '\x0c'), "Test With Truncation")).substr(0, 32) ==
          "a3b6167473100ee06e0c796c2955552b");
    // Keys longer than a block are hashed first.
    CHECK(hex_lower(hmac_sha256(std::string(131, '\xaa'), "Test Using Larger Than Block-Size Key - Hash Key First")) ==
          "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
    CHECK(hex_lower(hmac_sha256(std::string(131, '\xaa'),
                                "This is a test using a larger than block-size key and a larger than block-size data. "
                                "The key needs to be hashed before being used by the HMAC algorithm.")) ==
          "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
}

}  // namespace test_sha256
