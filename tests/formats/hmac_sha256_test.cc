#include "formats/hmac_sha256.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <string>

namespace sparktorch {
namespace {

std::string Hex(const std::array<uint8_t, 32>& digest) {
  static constexpr char kHexDigits[] = "0123456789abcdef";
  std::string hex;
  for (uint8_t byte : digest) {
    hex += kHexDigits[byte >> 4];
    hex += kHexDigits[byte & 0x0f];
  }
  return hex;
}

std::string Sha256Hex(std::string_view data) { return Hex(Sha256(data)); }

// Bytes 3, 10, 17, ... (i * 7 + 3 mod 256): every byte value, in no simple order.
std::string PatternedMessage(size_t length) {
  std::string message(length, '\0');
  for (size_t i = 0; i < length; ++i) message[i] = static_cast<char>((i * 7 + 3) % 256);
  return message;
}

// FIPS 180-4 examples (and the NIST one-million-'a' vector).

TEST(Sha256, HashesTheEmptyMessage) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Sha256, HashesAbc) {
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256, Hashes448BitMessageThatPadsIntoASecondBlock) {
  EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256, HashesOneMillionAs) {
  EXPECT_EQ(Sha256Hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// Lengths around the padding boundaries: 55 bytes is the longest that pads within one block, 56
// needs a second block for the length, 64 is exactly one block, 65 spills one byte over.
// Expected digests from Python's hashlib.sha256.
TEST(Sha256, HashesMessagesAroundTheBlockBoundary) {
  EXPECT_EQ(Sha256Hex(PatternedMessage(55)),
            "e7313d333c272e639f790978283f9eb392e843d0f29b7016828bb1daa4aac70b");
  EXPECT_EQ(Sha256Hex(PatternedMessage(56)),
            "4324d65f3c103567f5589c710bc08f8523f929a9272e3af36fc968e52abc6c27");
  EXPECT_EQ(Sha256Hex(PatternedMessage(63)),
            "81c80242132f230c3bd41b3e63bbcff16107339549214a99614ff26664625055");
  EXPECT_EQ(Sha256Hex(PatternedMessage(64)),
            "39e3d7b6b5d075d37d053ad89b24b41bef4f3c29760c84447cab3f3be1882241");
  EXPECT_EQ(Sha256Hex(PatternedMessage(65)),
            "aacca6ff74fdbb296d165a45cecfa04e5127bc008770fbbdd48006f2d2fae95e");
}

TEST(Sha256, EmptyViewWithNullDataHashesAsTheEmptyMessage) {
  EXPECT_EQ(Sha256Hex(std::string_view()),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

// RFC 4231 test cases (case 5, a truncated MAC, does not apply).

TEST(HmacSha256, MatchesRfc4231Case1) {
  EXPECT_EQ(Hex(HmacSha256(std::string(20, '\x0b'), "Hi There")),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
}

TEST(HmacSha256, MatchesRfc4231Case2ShortKey) {
  EXPECT_EQ(Hex(HmacSha256("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(HmacSha256, MatchesRfc4231Case3) {
  EXPECT_EQ(Hex(HmacSha256(std::string(20, '\xaa'), std::string(50, '\xdd'))),
            "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
}

TEST(HmacSha256, MatchesRfc4231Case4) {
  std::string key;
  for (char c = 0x01; c <= 0x19; ++c) key += c;
  EXPECT_EQ(Hex(HmacSha256(key, std::string(50, '\xcd'))),
            "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");
}

TEST(HmacSha256, MatchesRfc4231Case6KeyLongerThanABlock) {
  EXPECT_EQ(Hex(HmacSha256(std::string(131, '\xaa'),
                           "Test Using Larger Than Block-Size Key - Hash Key First")),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

TEST(HmacSha256, MatchesRfc4231Case7KeyAndMessageLongerThanABlock) {
  EXPECT_EQ(Hex(HmacSha256(std::string(131, '\xaa'),
                           "This is a test using a larger than block-size key and a larger than "
                           "block-size data. The key needs to be hashed before being used by the "
                           "HMAC algorithm.")),
            "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
}

// A 64-byte key is used as it is; a 65-byte key is hashed first. Expected values from Python's
// hmac module.
TEST(HmacSha256, HashesOnlyKeysLongerThanTheBlock) {
  EXPECT_EQ(Hex(HmacSha256(std::string(64, 'k'), "m")),
            "3b7a8d453e76edb519238a515105a57508d0f169f480ebeee120a9e7803289fa");
  EXPECT_EQ(Hex(HmacSha256(std::string(65, 'k'), "m")),
            "c2d7d4c2256ddb097409ec0c67e1d58fa1a007fc6932cac0d892a525d08af7cc");
}

TEST(HmacSha256Hex, WritesSixtyFourLowerCaseHexCharacters) {
  EXPECT_EQ(HmacSha256Hex("Jefe", "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(ConstantTimeEquals, AcceptsEqualStrings) {
  EXPECT_TRUE(ConstantTimeEquals("", ""));
  EXPECT_TRUE(ConstantTimeEquals("5bdcc146bf6075", "5bdcc146bf6075"));
}

TEST(ConstantTimeEquals, RejectsAOneByteDifferenceAnywhere) {
  const std::string mac = HmacSha256Hex("secret", "challenge");
  for (size_t i = 0; i < mac.size(); ++i) {
    std::string tampered = mac;
    tampered[i] = tampered[i] == '0' ? '1' : '0';
    EXPECT_FALSE(ConstantTimeEquals(mac, tampered)) << "differs at " << i;
  }
}

TEST(ConstantTimeEquals, RejectsDifferentLengths) {
  EXPECT_FALSE(ConstantTimeEquals("abc", "abcd"));
  EXPECT_FALSE(ConstantTimeEquals("abcd", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("", "a"));
}

}  // namespace
}  // namespace sparktorch
