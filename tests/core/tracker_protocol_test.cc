#include "core/dist/tracker_protocol.h"

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
  EXPECT_FALSE(ParseHello("hello control - -1 2 host -"));         // negative rank
  EXPECT_FALSE(ParseHello("hello control - 1 99999999999 host -")); // overflowing size
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

TEST(TrackerProtocol, RankListsReadAsEnglish) {
  EXPECT_EQ(RankList({3}), "3");
  EXPECT_EQ(RankList({2, 3}), "2 and 3");
  EXPECT_EQ(RankList({0, 2, 5}), "0, 2 and 5");
}

TEST(TrackerProtocol, AbortKindsRoundTrip) {
  for (AbortKind kind : {AbortKind::kLost, AbortKind::kFailed, AbortKind::kTimeout}) {
    EXPECT_EQ(ParseAbortKind(AbortKindName(kind)), kind);
  }
  EXPECT_FALSE(ParseAbortKind("bored"));
}

}  // namespace
}  // namespace sparktorch
