#ifndef SPARKTORCH_CORE_WORLD_TRACKER_PROTOCOL_H_
#define SPARKTORCH_CORE_WORLD_TRACKER_PROTOCOL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

// The tracker's wire protocol: lines of text over TCP, specified in sparktorch-formats(7)
// ("Tracker protocol"). Shared by the tracker (`sparktorch serve`), the ranks' control link and
// libsparktorch_pmi.so, which is why it knows no logging and no torch.

namespace sparktorch {

inline constexpr const char* kTrackerGreeting = "sparktorch-tracker 1";

// How often the tracker and the ranks prove to each other that they are alive, in seconds.
inline constexpr double kPingSeconds = 1.0;

// Why the tracker ended a job; each kind has its own exit code (cli/exit_codes.h).
enum class AbortKind { kLost, kFailed, kTimeout };
const char* AbortKindName(AbortKind kind);  // "lost", "failed", "timeout"
std::optional<AbortKind> ParseAbortKind(const std::string& name);

// The rank a control link claims when its process has none of its own (a Spark task of an empty
// partition, which `train --rank-from-stdin` finds without a rank before its rows): the tracker
// gives it a rank that no other process claimed, in the `start` line.
inline constexpr int kAnyRank = -1;

// What a connection says it is, in its first line.
struct Hello {
  std::string role;      // "control" (a rank's liveness link) or "pmi" (its MPI bootstrap)
  std::string job;       // the job id the rank was told, or "-" for any
  int rank = -1;         // 0..world_size-1, or kAnyRank
  int world_size = 0;
  std::string host;      // names the machine, so that ranks on one host form a clique
  std::string mac;       // HMAC of the challenge under the job's secret, "-" without a secret
};

// The MAC a client sends in reply to the greeting's `nonce`. Empty secret: "-".
std::string HelloMac(const std::string& secret, const std::string& nonce, const Hello& hello);

std::string FormatHello(const Hello& hello);
// Parses a hello line; returns nullopt when it is not one. A RANK of "-1" is kAnyRank; no other
// negative number is a rank.
std::optional<Hello> ParseHello(const std::string& line);

// The control link's `start JOB RANK` line: every rank has arrived, the job's id, and the rank
// of the process it is sent to (the one it claimed, or the one the tracker gave a kAnyRank).
struct Start {
  uint32_t job = 0;
  int rank = 0;
};
std::string FormatStart(const Start& start);
// Parses what follows "start " (`JOB RANK`); returns nullopt when it is not that.
std::optional<Start> ParseStart(const std::string& rest);

// Splits "verb rest of the line" at the first space.
std::pair<std::string, std::string> SplitVerb(const std::string& line);

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_WORLD_TRACKER_PROTOCOL_H_
