#include "formats/hmac_sha256.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <climits>
#include <stdexcept>

namespace sparktorch {
namespace {

// The bytes of `s`, never null: OpenSSL's manual does not say that a null pointer with length 0
// is an empty key or message, and an empty std::string_view may hold one.
const unsigned char* Bytes(std::string_view s) {
  static const unsigned char kEmpty = 0;
  return s.empty() ? &kEmpty : reinterpret_cast<const unsigned char*>(s.data());
}

}  // namespace

std::array<uint8_t, 32> HmacSha256(std::string_view key, std::string_view message) {
  std::array<uint8_t, 32> mac;
  unsigned int mac_size = 0;
  if (key.size() > INT_MAX ||
      HMAC(EVP_sha256(), Bytes(key), static_cast<int>(key.size()), Bytes(message), message.size(),
           mac.data(), &mac_size) == nullptr ||
      mac_size != mac.size()) {
    throw std::runtime_error("libcrypto's HMAC-SHA256 failed");
  }
  return mac;
}

std::string HmacSha256Hex(std::string_view key, std::string_view message) {
  static constexpr char kHexDigits[] = "0123456789abcdef";
  const std::array<uint8_t, 32> mac = HmacSha256(key, message);
  std::string hex(2 * mac.size(), '\0');
  for (size_t i = 0; i < mac.size(); ++i) {
    hex[2 * i] = kHexDigits[mac[i] >> 4];
    hex[2 * i + 1] = kHexDigits[mac[i] & 0x0f];
  }
  return hex;
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  return CRYPTO_memcmp(Bytes(a), Bytes(b), a.size()) == 0;
}

}  // namespace sparktorch
