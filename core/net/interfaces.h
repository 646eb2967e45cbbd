#ifndef SPARKTORCH_CORE_NET_INTERFACES_H_
#define SPARKTORCH_CORE_NET_INTERFACES_H_

#include <cstdint>
#include <optional>
#include <string>

namespace sparktorch {

// A network interface that holds an IPv4 address.
struct NetInterface {
  std::string name;     // "eth1"
  std::string address;  // "198.18.0.2"
  std::string subnet;   // the address's network, CIDR: "198.18.0.0/24"
  bool loopback = false;
};

// The interface that holds `address` (dotted IPv4), if one of this host's does.
std::optional<NetInterface> InterfaceWithAddress(const std::string& address);

// The CIDR network of `address` under `netmask` (both in network byte order): "198.18.0.0/24".
std::string SubnetText(uint32_t address, uint32_t netmask);

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_NET_INTERFACES_H_
