#ifndef SPARKTORCH_FORMATS_HMAC_SHA256_H_
#define SPARKTORCH_FORMATS_HMAC_SHA256_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace sparktorch {

// SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), written here so that authentication needs no
// crypto library. Ranks and workers prove to the tracker and the parameter server that they hold
// the shared secret by answering a random challenge with HmacSha256Hex(secret, challenge); the
// secret itself never goes on the wire.
//
// All functions are pure: they keep no state and any thread may call them concurrently. Inputs
// are arbitrary bytes of any length; none of them throws.

// The 32-byte SHA-256 digest of `data`.
std::array<uint8_t, 32> Sha256(std::string_view data);

// The 32-byte HMAC-SHA256 of `message` under `key`. A key longer than SHA-256's 64-byte block is
// hashed first, as RFC 2104 requires; an empty key is allowed.
std::array<uint8_t, 32> HmacSha256(std::string_view key, std::string_view message);

// HmacSha256(key, message) as 64 lower-case hex characters, the form sent on the wire.
std::string HmacSha256Hex(std::string_view key, std::string_view message);

// Whether `a` and `b` hold the same bytes. The time taken depends only on their lengths, not on
// where they first differ, so comparing a received MAC with the expected one does not tell an
// attacker how many leading characters were right. Lengths are not secret: a MAC's length is
// fixed.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

}  // namespace sparktorch

#endif  // SPARKTORCH_FORMATS_HMAC_SHA256_H_
