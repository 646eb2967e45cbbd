#include "core/net/interfaces.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <cstdint>

namespace sparktorch {

std::string SubnetText(uint32_t address, uint32_t netmask) {
  in_addr network{address & netmask};
  char text[INET_ADDRSTRLEN] = "?";
  inet_ntop(AF_INET, &network, text, sizeof text);
  return std::string(text) + "/" + std::to_string(__builtin_popcount(ntohl(netmask)));
}

std::optional<NetInterface> InterfaceWithAddress(const std::string& address) {
  in_addr wanted{};
  if (inet_pton(AF_INET, address.c_str(), &wanted) != 1) return std::nullopt;
  ifaddrs* all = nullptr;
  if (getifaddrs(&all) != 0) return std::nullopt;
  std::optional<NetInterface> found;
  for (const ifaddrs* i = all; i != nullptr && !found; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET || i->ifa_netmask == nullptr) continue;
    const uint32_t held = reinterpret_cast<const sockaddr_in*>(i->ifa_addr)->sin_addr.s_addr;
    if (held != wanted.s_addr) continue;
    const uint32_t mask = reinterpret_cast<const sockaddr_in*>(i->ifa_netmask)->sin_addr.s_addr;
    found = NetInterface{i->ifa_name, address, SubnetText(held, mask), (i->ifa_flags & IFF_LOOPBACK) != 0};
  }
  freeifaddrs(all);
  return found;
}

}  // namespace sparktorch
