#include "formats/base64.h"

#include <array>
#include <cstdint>
#include <cstring>

namespace sparktorch {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// Decoding tables, one per position in a group of four characters. Each entry holds the
// character's six bits already in their place in the group's three bytes, as those bytes lie in
// memory in a 32-bit word, so that OR-ing four entries gives a word to store as it is. The
// fourth byte is scratch: a character outside the alphabet sets a bit there (kInvalid), which
// survives the ORs: one test per group.
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
constexpr uint32_t InMemoryOrder(uint32_t group) { return group << 8; }
constexpr uint32_t kInvalid = 0x00000001;
#else
constexpr uint32_t InMemoryOrder(uint32_t group) {
  return ((group >> 16) & 0xff) | (group & 0xff00) | ((group & 0xff) << 16);
}
constexpr uint32_t kInvalid = 0x01000000;
#endif

struct DecodeTables {
  std::array<uint32_t, 256> at[4];
};

constexpr DecodeTables MakeDecodeTables() {
  DecodeTables t{};
  for (int pos = 0; pos < 4; ++pos) {
    for (int c = 0; c < 256; ++c) t.at[pos][c] = kInvalid;
    for (uint32_t v = 0; v < 64; ++v) {
      t.at[pos][static_cast<unsigned char>(kAlphabet[v])] = InMemoryOrder(v << (18 - 6 * pos));
    }
  }
  return t;
}

constexpr DecodeTables kDecode = MakeDecodeTables();

// The group's three bytes in memory order, then a scratch byte with kInvalid for a bad group.
inline uint32_t DecodeGroup(const unsigned char* in) {
  return kDecode.at[0][in[0]] | kDecode.at[1][in[1]] | kDecode.at[2][in[2]] | kDecode.at[3][in[3]];
}

// The offset of the first character of the group at `offset` that is not in the alphabet.
size_t FirstInvalid(std::string_view text, size_t offset) {
  for (size_t i = offset;; ++i) {
    if (kDecode.at[0][static_cast<unsigned char>(text[i])] == kInvalid) return i;
  }
}

size_t PaddingOf(std::string_view text) {
  size_t padding = 0;
  while (padding < text.size() && text[text.size() - 1 - padding] == '=') ++padding;
  return padding;
}

}  // namespace

void Base64Encode(std::string_view bytes, std::string* out) {
  const size_t old_size = out->size();
  out->resize(old_size + (bytes.size() + 2) / 3 * 4);
  char* o = out->data() + old_size;
  const auto* in = reinterpret_cast<const unsigned char*>(bytes.data());
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    uint32_t group = (uint32_t{in[i]} << 16) | (uint32_t{in[i + 1]} << 8) | in[i + 2];
    o[0] = kAlphabet[group >> 18];
    o[1] = kAlphabet[(group >> 12) & 63];
    o[2] = kAlphabet[(group >> 6) & 63];
    o[3] = kAlphabet[group & 63];
    o += 4;
  }
  const size_t rest = bytes.size() - i;
  if (rest > 0) {
    uint32_t group = uint32_t{in[i]} << 16;
    if (rest == 2) group |= uint32_t{in[i + 1]} << 8;
    o[0] = kAlphabet[group >> 18];
    o[1] = kAlphabet[(group >> 12) & 63];
    o[2] = rest == 2 ? kAlphabet[(group >> 6) & 63] : '=';
    o[3] = '=';
  }
}

std::optional<size_t> Base64DecodedSize(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  const size_t padding = PaddingOf(text);
  if (padding > 2) return std::nullopt;
  return text.size() / 4 * 3 - padding;
}

std::optional<size_t> Base64Decode(std::string_view text, char* out) {
  // Callers have checked Base64DecodedSize; a text it rejects is not decoded.
  if (text.size() % 4 != 0) return text.size() - text.size() % 4;
  if (text.empty()) return std::nullopt;
  const auto* in = reinterpret_cast<const unsigned char*>(text.data());
  const size_t groups = text.size() / 4;
  // All groups but the last write 4 bytes (the fourth is overwritten by the next group): one
  // store instead of three, and there is always room since the last group writes at least one.
  size_t g = 0;
  for (; g + 1 < groups; ++g) {
    const uint32_t word = DecodeGroup(in + 4 * g);
    if (word & kInvalid) return FirstInvalid(text, 4 * g);
    std::memcpy(out + 3 * g, &word, 4);
  }
  const size_t padding = PaddingOf(text.substr(4 * g));
  if (padding > 2) return 4 * g + 4 - padding;  // "x===": the first '=' is misplaced
  unsigned char last[4];
  std::memcpy(last, in + 4 * g, 4);
  for (size_t i = 4 - padding; i < 4; ++i) last[i] = 'A';  // padding decodes as zero bits
  const uint32_t word = DecodeGroup(last);
  if (word & kInvalid) return FirstInvalid(text, 4 * g);
  unsigned char bytes[4];
  std::memcpy(bytes, &word, 4);
  std::memcpy(out + 3 * g, bytes, 3 - padding);
  return std::nullopt;
}

}  // namespace sparktorch
