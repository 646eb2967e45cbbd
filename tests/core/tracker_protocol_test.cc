#include "core/world/tracker_protocol.h"

#include <gtest/gtest.h>

namespace sparktorch {
namespace {

Hello ARank() { return Hello{"control", "65537", 2, 4, "host/boot", "-"}; }

TEST(TrackerProtocol, HelloRoundTrips) {
  Hello hello = ARank();
  hello.mac = HelloMac("secret", "00ff", hello);
  std::optional<Hello> parsed = ParseHello(FormatHello(hello));
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->role, "control");
  EXPECT_EQ(parsed->job, "65537");
  EXPECT_EQ(parsed->rank, 2);
  EXPECT_EQ(parsed->world_size, 4);
  EXPECT_EQ(parsed->host, "host/boot");
  EXPECT_EQ(parsed->mac, hello.mac);
}

TEST(TrackerProtocol, MalformedHellosAreNotHellos) {
  EXPECT_FALSE(ParseHello(""));
  EXPECT_FALSE(ParseHello("GET / HTTP/1.1"));
  EXPECT_FALSE(ParseHello("hello control - 1 2 host"));            // no mac
  EXPECT_FALSE(ParseHello("hello control - 1 2 host - extra"));    // too much
  EXPECT_FALSE(ParseHello("hello spy - 1 2 host -"));              // unknown role
  EXPECT_FALSE(ParseHello("hello control - -2 2 host -"));         // negative rank
  EXPECT_FALSE(ParseHello("hello control - -0 2 host -"));         // not a number
  EXPECT_FALSE(ParseHello("hello control - 1 99999999999 host -")); // overflowing size
}

TEST(TrackerProtocol, RankMinusOneIsAnyRank) {
  std::optional<Hello> parsed = ParseHello("hello control - -1 4 host/boot -");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->rank, kAnyRank);
  Hello any{"control", "-", kAnyRank, 4, "host/boot", "-"};
  EXPECT_EQ(FormatHello(any), "hello control - -1 4 host/boot -");
  // The MAC covers the claim of no rank as it covers a rank.
  Hello rank0 = any;
  rank0.rank = 0;
  EXPECT_NE(HelloMac("secret", "nonce", any), HelloMac("secret", "nonce", rank0));
}

TEST(TrackerProtocol, StartTellsTheJobAndTheRank) {
  EXPECT_EQ(FormatStart(Start{65537, 2}), "start 65537 2");
  std::optional<Start> start = ParseStart("4294901761 13");
  ASSERT_TRUE(start);
  EXPECT_EQ(start->job, 4294901761u);
  EXPECT_EQ(start->rank, 13);
  EXPECT_FALSE(ParseStart("65537"));            // no rank
  EXPECT_FALSE(ParseStart("65537 -1"));         // not a rank
  EXPECT_FALSE(ParseStart("65537 1 2"));        // too much
  EXPECT_FALSE(ParseStart("4294967296 1"));     // not a 32-bit job id
  EXPECT_FALSE(ParseStart("job 1"));
}

TEST(TrackerProtocol, MacBindsTheNonceAndEveryClaim) {
  const Hello hello = ARank();
  const std::string mac = HelloMac("secret", "nonce", hello);
  EXPECT_EQ(mac.size(), 64u);
  EXPECT_NE(mac, HelloMac("other", "nonce", hello));
  EXPECT_NE(mac, HelloMac("secret", "nonce2", hello));
  Hello other_rank = hello;
  other_rank.rank = 3;
  EXPECT_NE(mac, HelloMac("secret", "nonce", other_rank));
  Hello other_role = hello;
  other_role.role = "pmi";
  EXPECT_NE(mac, HelloMac("secret", "nonce", other_role));
  EXPECT_EQ(HelloMac("", "nonce", hello), "-");
}

// The wire format that sparktorch-formats(7)'s Python client writes: hmac.new(b"secret",
// b"sparktorch-tracker 1|00ff|control|65537|2|4|host/boot", hashlib.sha256).hexdigest().
TEST(TrackerProtocol, MacIsPythonsHmacSha256OfTheClaims) {
  EXPECT_EQ(HelloMac("secret", "00ff", ARank()),
            "6b9c64f619d516e722d406b0102feaed390a5e222ddbbc12f8106de0f1a34747");
}

TEST(TrackerProtocol, AbortKindsRoundTrip) {
  for (AbortKind kind : {AbortKind::kLost, AbortKind::kFailed, AbortKind::kTimeout}) {
    EXPECT_EQ(ParseAbortKind(AbortKindName(kind)), kind);
  }
  EXPECT_FALSE(ParseAbortKind("bored"));
}

}  // namespace
}  // namespace sparktorch
