#include "formats/hmac_sha256.h"

#include <cassert>
#include <cstddef>
#include <cstring>

namespace sparktorch {
namespace {

constexpr size_t kBlockSize = 64;  // Bytes per SHA-256 message block.

// FIPS 180-4 section 4.2.2: the first 32 bits of the fractional parts of the cube roots of the
// first 64 primes.
constexpr uint32_t kRoundConstants[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

// FIPS 180-4 section 5.3.3: the first 32 bits of the fractional parts of the square roots of the
// first 8 primes.
constexpr uint32_t kInitialState[8] = {
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
};

constexpr uint32_t RotateRight(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

uint32_t LoadBigEndian32(const unsigned char* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

// An incremental SHA-256, so that HMAC can hash its padded key and then the message without
// concatenating them. Only the last Update may leave a partial block: HMAC's pads are exactly one
// block, so nothing needs to carry a partial block over into the next call.
class Sha256Hasher {
 public:
  Sha256Hasher() { std::memcpy(state_, kInitialState, sizeof(state_)); }

  // REQUIRES: every earlier Update was given a multiple of kBlockSize bytes.
  void Update(std::string_view data) {
    assert(buffered_ == 0);
    const auto* p = reinterpret_cast<const unsigned char*>(data.data());
    size_t n = data.size();
    total_bytes_ += n;
    for (; n >= kBlockSize; p += kBlockSize, n -= kBlockSize) Compress(p);
    if (n > 0) std::memcpy(buffer_, p, n);  // p may be null when data is empty.
    buffered_ = n;
  }

  // Pads the message (FIPS 180-4 section 5.1.1) and returns the digest. The hasher is spent.
  std::array<uint8_t, 32> Finish() {
    const uint64_t total_bits = total_bytes_ * 8;
    buffer_[buffered_++] = 0x80;
    // The 64-bit length must fit in the block's last 8 bytes; if not, pad out a whole block.
    if (buffered_ > kBlockSize - 8) {
      std::memset(buffer_ + buffered_, 0, kBlockSize - buffered_);
      Compress(buffer_);
      buffered_ = 0;
    }
    std::memset(buffer_ + buffered_, 0, kBlockSize - 8 - buffered_);
    for (size_t i = 0; i < 8; ++i) {
      buffer_[kBlockSize - 1 - i] = static_cast<unsigned char>(total_bits >> (8 * i));
    }
    Compress(buffer_);

    std::array<uint8_t, 32> digest;
    for (size_t i = 0; i < 8; ++i) {
      digest[4 * i] = static_cast<uint8_t>(state_[i] >> 24);
      digest[4 * i + 1] = static_cast<uint8_t>(state_[i] >> 16);
      digest[4 * i + 2] = static_cast<uint8_t>(state_[i] >> 8);
      digest[4 * i + 3] = static_cast<uint8_t>(state_[i]);
    }
    return digest;
  }

 private:
  // FIPS 180-4 section 6.2.2: folds one 64-byte block into state_.
  void Compress(const unsigned char* block) {
    uint32_t w[64];
    for (int t = 0; t < 16; ++t) w[t] = LoadBigEndian32(block + 4 * t);
    for (int t = 16; t < 64; ++t) {
      const uint32_t s0 = RotateRight(w[t - 15], 7) ^ RotateRight(w[t - 15], 18) ^ (w[t - 15] >> 3);
      const uint32_t s1 = RotateRight(w[t - 2], 17) ^ RotateRight(w[t - 2], 19) ^ (w[t - 2] >> 10);
      w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }

    uint32_t a = state_[0], b = state_[1], c = state_[2], d = state_[3];
    uint32_t e = state_[4], f = state_[5], g = state_[6], h = state_[7];
    for (int t = 0; t < 64; ++t) {
      const uint32_t sigma1 = RotateRight(e, 6) ^ RotateRight(e, 11) ^ RotateRight(e, 25);
      const uint32_t choose = (e & f) ^ (~e & g);
      const uint32_t t1 = h + sigma1 + choose + kRoundConstants[t] + w[t];
      const uint32_t sigma0 = RotateRight(a, 2) ^ RotateRight(a, 13) ^ RotateRight(a, 22);
      const uint32_t majority = (a & b) ^ (a & c) ^ (b & c);
      const uint32_t t2 = sigma0 + majority;
      h = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    state_[0] += a;
    state_[1] += b;
    state_[2] += c;
    state_[3] += d;
    state_[4] += e;
    state_[5] += f;
    state_[6] += g;
    state_[7] += h;
  }

  uint32_t state_[8];
  unsigned char buffer_[kBlockSize];
  size_t buffered_ = 0;  // Bytes of a partial block waiting in buffer_.
  uint64_t total_bytes_ = 0;
};

std::string_view AsStringView(const unsigned char* bytes, size_t n) {
  return std::string_view(reinterpret_cast<const char*>(bytes), n);
}

}  // namespace

std::array<uint8_t, 32> Sha256(std::string_view data) {
  Sha256Hasher hasher;
  hasher.Update(data);
  return hasher.Finish();
}

std::array<uint8_t, 32> HmacSha256(std::string_view key, std::string_view message) {
  // RFC 2104: K is the key hashed down if longer than a block, then zero-padded to a block.
  unsigned char padded_key[kBlockSize] = {};
  if (key.size() > kBlockSize) {
    const std::array<uint8_t, 32> hashed = Sha256(key);
    std::memcpy(padded_key, hashed.data(), hashed.size());
  } else if (!key.empty()) {
    std::memcpy(padded_key, key.data(), key.size());
  }

  unsigned char inner_pad[kBlockSize];
  unsigned char outer_pad[kBlockSize];
  for (size_t i = 0; i < kBlockSize; ++i) {
    inner_pad[i] = padded_key[i] ^ 0x36;
    outer_pad[i] = padded_key[i] ^ 0x5c;
  }

  Sha256Hasher inner;
  inner.Update(AsStringView(inner_pad, kBlockSize));
  inner.Update(message);
  const std::array<uint8_t, 32> inner_digest = inner.Finish();

  Sha256Hasher outer;
  outer.Update(AsStringView(outer_pad, kBlockSize));
  outer.Update(AsStringView(inner_digest.data(), inner_digest.size()));
  return outer.Finish();
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
  // Accumulate every difference rather than returning at the first, so that the loop always
  // runs to the end. volatile keeps the compiler from turning the loop into an early exit.
  volatile unsigned char difference = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    difference = static_cast<unsigned char>(
        difference | (static_cast<unsigned char>(a[i]) ^ static_cast<unsigned char>(b[i])));
  }
  return difference == 0;
}

}  // namespace sparktorch
