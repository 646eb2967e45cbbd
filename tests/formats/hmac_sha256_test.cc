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

// RFC 4231 section 4, the HMAC-SHA-256 outputs of test cases 1 to 7.

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

TEST(HmacSha256, MatchesRfc4231Case5TruncatedTo128Bits) {
  // The RFC gives only the first 128 bits of this MAC.
  EXPECT_EQ(Hex(HmacSha256(std::string(20, '\x0c'), "Test With Truncation")).substr(0, 32),
            "a3b6167473100ee06e0c796c2955552b");
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

// Expected value from Python's hmac module.
TEST(HmacSha256, AcceptsAnEmptyKeyAndMessage) {
  EXPECT_EQ(Hex(HmacSha256("", "")),
            "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad");
  EXPECT_EQ(Hex(HmacSha256(std::string_view(), std::string_view())),
            "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad");
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
