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

// One byte from `fd`: 1, 0 at the end of the input; throws on a read error.
int ReadByte(int fd, char* c, const std::string& input) {
  for (;;) {
    const ssize_t n = ::read(fd, c, 1);
    if (n >= 0) return static_cast<int>(n);
    if (errno != EINTR) throw InputError(input + ": read error: " + std::strerror(errno));
  }
}

}  // namespace

std::optional<int> ReadRankPrefix(int fd, int world_size, const std::string& input) {
  std::string seen;
  char c = 0;
  bool ended = ReadByte(fd, &c, input) == 0;
  if (ended) return std::nullopt;  // no rows at all: an empty partition
  while (!ended && c >= '0' && c <= '9' && seen.size() < kMaxDigits) {
    seen.push_back(c);
    ended = ReadByte(fd, &c, input) == 0;
  }
  if (!ended && c == '\t' && !seen.empty()) {
    const int rank = std::stoi(seen);
    if (rank >= world_size) {
      throw InputError(input + ": expected a rank below --world-size " + std::to_string(world_size) +
                       " before the first row (--rank-from-stdin), got " + seen);
    }
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
