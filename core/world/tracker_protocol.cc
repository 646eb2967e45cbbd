#include "core/world/tracker_protocol.h"

#include <sstream>

#include "formats/hmac_sha256.h"

namespace sparktorch {

const char* AbortKindName(AbortKind kind) {
  switch (kind) {
    case AbortKind::kLost:
      return "lost";
    case AbortKind::kFailed:
      return "failed";
    case AbortKind::kTimeout:
      return "timeout";
  }
  return "lost";
}

std::optional<AbortKind> ParseAbortKind(const std::string& name) {
  if (name == "lost") return AbortKind::kLost;
  if (name == "failed") return AbortKind::kFailed;
  if (name == "timeout") return AbortKind::kTimeout;
  return std::nullopt;
}

std::string HelloMac(const std::string& secret, const std::string& nonce, const Hello& hello) {
  if (secret.empty()) return "-";
  // The MAC binds the challenge to everything the hello claims, so no claim can be replayed or
  // altered without the secret.
  return HmacSha256Hex(secret, std::string(kTrackerGreeting) + "|" + nonce + "|" + hello.role + "|" +
                                   hello.job + "|" + std::to_string(hello.rank) + "|" +
                                   std::to_string(hello.world_size) + "|" + hello.host);
}

std::string FormatHello(const Hello& h) {
  return "hello " + h.role + " " + h.job + " " + std::to_string(h.rank) + " " +
         std::to_string(h.world_size) + " " + h.host + " " + h.mac;
}

std::optional<Hello> ParseHello(const std::string& line) {
  std::istringstream in(line);
  std::string verb, rank, world;
  Hello h;
  if (!(in >> verb >> h.role >> h.job >> rank >> world >> h.host >> h.mac) || verb != "hello") {
    return std::nullopt;
  }
  std::string extra;
  if (in >> extra) return std::nullopt;
  if (h.role != "control" && h.role != "pmi") return std::nullopt;
  auto number = [](const std::string& s) {
    return !s.empty() && s.size() <= 9 && s.find_first_not_of("0123456789") == std::string::npos;
  };
  if (!number(world)) return std::nullopt;
  if (rank == std::to_string(kAnyRank)) {
    h.rank = kAnyRank;
  } else if (number(rank)) {
    h.rank = std::stoi(rank);
  } else {
    return std::nullopt;
  }
  h.world_size = std::stoi(world);
  return h;
}

std::string FormatStart(const Start& start) {
  return "start " + std::to_string(start.job) + " " + std::to_string(start.rank);
}

std::optional<Start> ParseStart(const std::string& rest) {
  std::istringstream in(rest);
  std::string job, rank, extra;
  if (!(in >> job >> rank) || (in >> extra)) return std::nullopt;
  auto digits = [](const std::string& s, size_t max) {
    return !s.empty() && s.size() <= max && s.find_first_not_of("0123456789") == std::string::npos;
  };
  if (!digits(job, 10) || !digits(rank, 9)) return std::nullopt;
  const unsigned long long id = std::stoull(job);
  if (id > 0xffffffffull) return std::nullopt;
  return Start{static_cast<uint32_t>(id), std::stoi(rank)};
}

std::pair<std::string, std::string> SplitVerb(const std::string& line) {
  size_t space = line.find(' ');
  if (space == std::string::npos) return {line, ""};
  return {line.substr(0, space), line.substr(space + 1)};
}

}  // namespace sparktorch
