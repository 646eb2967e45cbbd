#include "core/net/interfaces.h"

#include <arpa/inet.h>

#include <gtest/gtest.h>

namespace sparktorch {
namespace {

uint32_t Ip(const char* text) {
  in_addr a{};
  EXPECT_EQ(inet_pton(AF_INET, text, &a), 1) << text;
  return a.s_addr;
}

TEST(Interfaces, SubnetTextIsTheNetworkInCidr) {
  EXPECT_EQ(SubnetText(Ip("198.18.0.7"), Ip("255.255.255.0")), "198.18.0.0/24");
  EXPECT_EQ(SubnetText(Ip("198.19.200.1"), Ip("255.254.0.0")), "198.18.0.0/15");
  EXPECT_EQ(SubnetText(Ip("10.1.2.3"), Ip("255.255.255.255")), "10.1.2.3/32");
}

TEST(Interfaces, LoopbackHoldsItsAddress) {
  const std::optional<NetInterface> lo = InterfaceWithAddress("127.0.0.1");
  ASSERT_TRUE(lo.has_value());
  EXPECT_EQ(lo->name, "lo");
  EXPECT_EQ(lo->address, "127.0.0.1");
  EXPECT_EQ(lo->subnet, "127.0.0.0/8");
  EXPECT_TRUE(lo->loopback);
}

TEST(Interfaces, AnAddressNoInterfaceHoldsHasNone) {
  EXPECT_FALSE(InterfaceWithAddress("198.18.255.254").has_value());  // no test harness runs here
  EXPECT_FALSE(InterfaceWithAddress("").has_value());
  EXPECT_FALSE(InterfaceWithAddress("not an address").has_value());
}

}  // namespace
}  // namespace sparktorch
