#include "core/net/random_hex.h"

#include <random>

namespace sparktorch {

std::string RandomHex(size_t bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::random_device device;  // the kernel's getrandom on Linux
  std::string hex;
  for (size_t i = 0; i < bytes; ++i) {
    unsigned v = device() & 0xff;
    hex += kDigits[v >> 4];
    hex += kDigits[v & 15];
  }
  return hex;
}

}  // namespace sparktorch
