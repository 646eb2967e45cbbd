#ifndef SPARKTORCH_FORMATS_HMAC_SHA256_H_
#define SPARKTORCH_FORMATS_HMAC_SHA256_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace sparktorch {

// HMAC-SHA256 (RFC 2104, RFC 4231), computed by OpenSSL's libcrypto. Ranks and workers prove to
// the tracker and the parameter server that they hold the shared secret by answering a random
// challenge with HmacSha256Hex(secret, challenge); the secret itself never goes on the wire.
//
// All functions are pure: they keep no state and any thread may call them concurrently. Inputs
// are arbitrary bytes of any length.

// The 32-byte HMAC-SHA256 of `message` under `key`. A key longer than SHA-256's 64-byte block is
// hashed first, as RFC 2104 requires; an empty key is allowed. Throws std::runtime_error only
// when libcrypto fails (no memory, a broken installation) or the key is longer than 2 GiB.
std::array<uint8_t, 32> HmacSha256(std::string_view key, std::string_view message);

// HmacSha256(key, message) as 64 lower-case hex characters, the form sent on the wire. Throws as
// HmacSha256 does.
std::string HmacSha256Hex(std::string_view key, std::string_view message);

// Whether `a` and `b` hold the same bytes, compared with libcrypto's CRYPTO_memcmp: the time
// taken depends only on their lengths, not on where they first differ, so comparing a received
// MAC with the expected one does not tell an attacker how many leading characters were right.
// Lengths are not secret: a MAC's length is fixed. Never throws.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

}  // namespace sparktorch

#endif  // SPARKTORCH_FORMATS_HMAC_SHA256_H_
