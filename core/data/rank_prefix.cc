#include "core/data/rank_prefix.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "formats/error.h"
#include "formats/number_parse.h"

namespace sparktorch {
namespace {

// A rank has at most this many digits (as a tracker's hello allows).
constexpr size_t kMaxDigits = 9;
// Bytes of what came instead of a prefix that the message quotes (QuoteForMessage shows 32).
constexpr size_t kQuotedBytes = 33;
// The longest GPU part (" gpu=...") a prefix may have.
constexpr size_t kMaxGpuBytes = 1024;

bool IsAddressChar(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' ||
         c == '_' || c == '.' || c == ':' || c == '/';
}

// The addresses of a prefix's GPU part, "gpu=A,B" (after the space); nullopt when it is not one.
std::optional<std::vector<std::string>> ParseGpus(const std::string& part) {
  if (part.rfind("gpu=", 0) != 0) return std::nullopt;
  std::vector<std::string> out(1);
  for (char c : part.substr(4)) {
    if (c == ',') {
      if (out.back().empty()) return std::nullopt;
      out.emplace_back();
    } else if (IsAddressChar(c)) {
      out.back().push_back(c);
    } else {
      return std::nullopt;
    }
  }
  if (out.back().empty()) return std::nullopt;
  return out;
}

// One byte from `fd`: 1, 0 at the end of the input; throws on a read error.
int ReadByte(int fd, char* c, const std::string& input) {
  for (;;) {
    const ssize_t n = ::read(fd, c, 1);
    if (n >= 0) return static_cast<int>(n);
    if (errno != EINTR) throw InputError(input + ": read error: " + std::strerror(errno));
  }
}

}  // namespace

std::optional<int> ReadRankPrefix(int fd, int world_size, const std::string& input,
                                  std::vector<std::string>* gpus) {
  std::string seen;
  char c = 0;
  bool ended = ReadByte(fd, &c, input) == 0;
  if (ended) return std::nullopt;  // no rows at all: an empty partition
  while (!ended && c >= '0' && c <= '9' && seen.size() < kMaxDigits) {
    seen.push_back(c);
    ended = ReadByte(fd, &c, input) == 0;
  }
  std::optional<std::vector<std::string>> given;
  if (!ended && c == ' ' && !seen.empty()) {  // " gpu=..." before the tab
    std::string part;
    for (;;) {
      ended = ReadByte(fd, &c, input) == 0;
      if (ended || c == '\t' || c == '\n' || part.size() >= kMaxGpuBytes) break;
      part.push_back(c);
    }
    given = ParseGpus(part);
    if (!given) seen += " " + part;
  }
  if (!ended && c == '\t' && !seen.empty() && (given || seen.find(' ') == std::string::npos)) {
    const int rank = std::stoi(seen);
    if (rank >= world_size) {
      throw InputError(input + ": expected a rank below --world-size " + std::to_string(world_size) +
                       " before the first row (--rank-from-stdin), got " + seen);
    }
    if (gpus && given) *gpus = std::move(*given);
    return rank;
  }
  // Not a prefix: quote the start of the line that came instead (the process ends anyway).
  if (!ended) seen.push_back(c);
  while (!ended && seen.size() < kQuotedBytes && seen.back() != '\n') {
    ended = ReadByte(fd, &c, input) == 0;
    if (!ended) seen.push_back(c);
  }
  std::string got;
  if (!seen.empty() && seen.back() == '\n') {
    seen.pop_back();
    got = seen.empty() ? "an empty line" : QuoteForMessage(seen);
  } else {
    got = QuoteForMessage(seen) + (ended ? " and the end of the input" : "");
  }
  throw InputError(input + ": expected the rank (digits and a tab) before the first row "
                   "(--rank-from-stdin), got " + got);
}

}  // namespace sparktorch
