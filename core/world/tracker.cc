#include "core/world/tracker.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <random>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "core/world/tracker_checkpoint.h"
#include "core/net/random_hex.h"
#include "core/progress/epoch_progress.h"
#include "formats/error.h"
#include "formats/hmac_sha256.h"

namespace sparktorch {
namespace {

// How long a write to one rank may block the loop before the rank counts as unreachable.
constexpr double kWriteSeconds = 2.0;

// How messages name the process of a hello or a connection.
std::string Who(int rank) {
  return rank == kAnyRank ? std::string("a rank with no rows") : "rank " + std::to_string(rank);
}

}  // namespace

struct Tracker::Connection {
  enum class Role { kNew, kControl, kPmi };

  LineChannel channel;
  std::string peer;
  std::string nonce;
  Role role = Role::kNew;
  int rank = -1;     // kAnyRank for a control link without a rank, until the start
  std::string host;  // its hello's HOST
  bool in_barrier = false;
  ModelLines checkpoint{"rank 0's checkpoint"};  // rank 0's, as they come
  ModelLines model{"rank 0's trained model"};
  SteadyTime last_heard = std::chrono::steady_clock::now();
};

namespace {

// The host name a rank's hello gave (its HostKey without the boot id), for messages.
std::string HostOf(const std::string& host_key) {
  const std::string name = host_key.substr(0, host_key.find('/'));
  return name.empty() ? std::string("an unknown host") : name;
}

}  // namespace

Tracker::Tracker(TrackerOptions options) : options_(std::move(options)) {
  if (options_.world_size < 1) throw UsageError("--world-size must be at least 1");
  if (options_.job_id == 0) {
    // Open MPI reads the job id as a 32-bit number, a 16-bit job family over a 16-bit local job
    // (as mpirun makes them: [[family,1]]); it names shared-memory segments, so jobs on one host
    // must not share it. With local job bits of its own choosing, Open MPI 4.1 gave the ranks
    // of one job different names, and their connections failed.
    std::random_device random;
    options_.job_id = ((1 + random() % 0x7ffe) << 16) | 1;
  }
  listener_ = options_.listen_fd >= 0 ? Fd(options_.listen_fd) : Listen(options_.listen);
  control_.assign(options_.world_size, nullptr);
  finished_.assign(options_.world_size, false);
  hosts_.assign(options_.world_size, "");
}

Tracker::~Tracker() = default;

void Tracker::Send(Connection& c, const std::string& line) {
  if (!c.channel.WriteLine(line, After(kWriteSeconds))) {
    spdlog::debug("tracker: could not write to {}", c.peer);
  }
}

void Tracker::Accept() {
  int fd = ::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) return;
  auto c = std::make_unique<Connection>();
  DetectDeadPeer(fd, kDeadPeerMillis);
  c->channel = LineChannel(Fd(fd));
  c->peer = PeerName(fd);
  c->nonce = RandomHex(16);
  Send(*c, std::string(kTrackerGreeting) + " " + c->nonce);
  connections_.push_back(std::move(c));
}

void Tracker::Refuse(Connection& c, const std::string& why) {
  spdlog::warn("tracker: refused a connection from {}: {}", c.peer, why);
  Send(c, "refused " + why);
  c.channel.Close();
}

void Tracker::End(AbortKind kind, const std::string& message) {
  if (ended_) return;
  ended_ = true;
  outcome_ = TrackerOutcome{false, kind, message};
  spdlog::error("tracker: ending the job: {}", message);
  const std::string abort = std::string("abort ") + AbortKindName(kind) + " " + message;
  for (Connection* c : control_) {
    if (c && c->channel.open()) Send(*c, abort);
  }
  for (Connection* c : any_) {
    if (c->channel.open()) Send(*c, abort);
  }
}

void Tracker::Admit(Connection& c, const std::string& line) {
  std::optional<Hello> hello = ParseHello(line);
  if (!hello) return Refuse(c, "not a sparktorch rank (no hello)");
  const bool any = hello->rank == kAnyRank && hello->role == "control";
  const std::string who = any ? Who(kAnyRank) : "rank " + std::to_string(hello->rank);
  if (!options_.secret.empty()) {
    if (hello->mac == "-") {
      return Refuse(c, who + " has no secret, the tracker has one: set SPARKTORCH_SECRET to the job's secret");
    }
    if (!ConstantTimeEquals(hello->mac, HelloMac(options_.secret, c.nonce, *hello))) {
      return Refuse(c, "wrong secret from " + who + ": its SPARKTORCH_SECRET is not the tracker's");
    }
  } else if (hello->mac != "-") {
    return Refuse(c, who + " has a secret, the tracker has none: give both the same SPARKTORCH_SECRET");
  }
  const std::string job = std::to_string(options_.job_id);
  if (hello->job != "-" && hello->job != job) {
    return Refuse(c, who + " belongs to job " + hello->job + "; this tracker runs job " + job);
  }
  if (hello->world_size != options_.world_size) {
    return Refuse(c, who + " was started with --world-size " + std::to_string(hello->world_size) +
                         "; the tracker's is " + std::to_string(options_.world_size));
  }
  if ((hello->rank < 0 && !any) || hello->rank >= options_.world_size) {
    return Refuse(c, who + " is out of range for a world of " + std::to_string(options_.world_size));
  }
  c.rank = hello->rank;
  if (hello->role == "pmi") {
    if (!options_.serve_pmi) return Refuse(c, "this tracker watches liveness only; it serves no PMI");
    if (!started_) return Refuse(c, who + " asked for PMI before every rank arrived");
    c.role = Connection::Role::kPmi;
    Send(c, "ok");
    return;
  }
  if (any && started_) {
    return Refuse(c, who + " arrived, but every rank of this job has arrived already");
  }
  if (!any && !hosts_[c.rank].empty()) {
    return Refuse(c, who + " has arrived already" +
                         (control_[c.rank] ? " (from " + control_[c.rank]->peer + ")" : std::string()));
  }
  c.role = Connection::Role::kControl;
  c.host = hello->host;
  if (any) {
    any_.push_back(&c);
  } else {
    control_[c.rank] = &c;
    hosts_[c.rank] = hello->host;
  }
  Send(c, "ok");
  const int arrived = static_cast<int>(std::count_if(hosts_.begin(), hosts_.end(),
                                                     [](const std::string& h) { return !h.empty(); })) +
                      static_cast<int>(any_.size());
  spdlog::log(options_.serve_pmi ? spdlog::level::info : spdlog::level::debug,
              "tracker: {} arrived from {} ({} of {})", who, c.peer, arrived, options_.world_size);
  MaybeStart();
}

void Tracker::MaybeStart() {
  const int claimed = static_cast<int>(std::count_if(
      hosts_.begin(), hosts_.end(), [](const std::string& h) { return !h.empty(); }));
  if (started_ || claimed + static_cast<int>(any_.size()) < options_.world_size) return;
  const auto level = options_.serve_pmi ? spdlog::level::info : spdlog::level::debug;
  // The ranks nobody claimed, ascending, to the ranks without one, in the order they came.
  size_t next = 0;
  for (int r = 0; r < options_.world_size && next < any_.size(); ++r) {
    if (!hosts_[r].empty()) continue;
    Connection& c = *any_[next++];
    c.rank = r;
    control_[r] = &c;
    hosts_[r] = c.host;
    spdlog::log(level, "tracker: the rank with no rows from {} is rank {}, which no other rank claimed",
                c.peer, r);
  }
  any_.clear();
  started_ = true;
  const std::string job = std::to_string(options_.job_id);
  spdlog::log(level, "tracker: all {} ranks arrived; job {} starts", options_.world_size, job);
  for (Connection* r : control_) Send(*r, FormatStart(Start{options_.job_id, r->rank}));
}

void Tracker::HandleControl(Connection& c, const std::string& verb, const std::string& rest) {
  if (verb == "ping") return;
  if (verb == "epoch") {
    std::optional<EpochProgress> progress =
        EpochProgressFromJson(nlohmann::json::parse(rest, nullptr, false));
    if (!progress) {
      spdlog::warn("tracker: {} sent an epoch report that is not one: {}", Who(c.rank), rest.substr(0, 200));
      return;
    }
    spdlog::log(options_.serve_pmi ? spdlog::level::info : spdlog::level::debug, "{}",
                ProgressLine(*progress));
    return;
  }
  if (c.rank == kAnyRank && verb != "fail") return;  // nothing else comes before the start
  if (verb == "checkpoint-record" || verb == "checkpoint") return HandleCheckpoint(c, verb, rest);
  if (verb == "model-record" || verb == "model") return HandleModel(c, verb, rest);
  if (verb == "done") {
    finished_[c.rank] = true;
    spdlog::log(options_.serve_pmi ? spdlog::level::info : spdlog::level::debug,
                "tracker: rank {} finished", c.rank);
    if (std::all_of(finished_.begin(), finished_.end(), [](bool f) { return f; })) {
      ended_ = true;
      outcome_ = TrackerOutcome{true, AbortKind::kLost, ""};
    }
    return;
  }
  if (verb == "fail") return End(AbortKind::kFailed, Who(c.rank) + " failed: " + rest);
  spdlog::warn("tracker: rank {} sent an unknown message: {}", c.rank, verb);
}

void Tracker::HandleCheckpoint(Connection& c, const std::string& verb, const std::string& rest) {
  if (c.rank != 0) {
    if (verb == "checkpoint") {
      spdlog::warn("tracker: rank {} sent a checkpoint; only rank 0's are kept", c.rank);
    }
    return;
  }
  if (verb == "checkpoint-record") return c.checkpoint.Record(rest);
  KeepCheckpoint(c.checkpoint, rest, options_.on_checkpoint);
}

void Tracker::HandleModel(Connection& c, const std::string& verb, const std::string& rest) {
  if (c.rank != 0) {
    return End(AbortKind::kFailed, Who(c.rank) + " sent a trained model; only rank 0 sends one");
  }
  if (verb == "model-record") return c.model.Record(rest);
  // The trained model is the job's result: one that cannot be kept fails the job.
  const std::string why = KeepModel(c.model, options_.on_model);
  if (!why.empty()) End(AbortKind::kFailed, why);
}

void Tracker::HandlePmi(Connection& c, const std::string& verb, const std::string& rest) {
  if (verb == "put") {
    auto [key, value] = SplitVerb(rest);
    kvs_[key] = value;
  } else if (verb == "commit") {
    Send(c, "ok");
  } else if (verb == "get") {
    auto found = kvs_.find(rest);
    Send(c, found == kvs_.end() ? std::string("missing") : "value " + found->second);
  } else if (verb == "barrier") {
    if (!c.in_barrier) {
      c.in_barrier = true;
      ++in_barrier_;
    }
    if (in_barrier_ == options_.world_size) {
      for (auto& other : connections_) {
        if (other->role == Connection::Role::kPmi && other->in_barrier) {
          other->in_barrier = false;
          Send(*other, "barrier-done");
        }
      }
      in_barrier_ = 0;
    }
  } else if (verb == "clique") {
    std::string ranks;
    for (int r = 0; r < options_.world_size; ++r) {
      if (hosts_[r] != hosts_[c.rank]) continue;
      if (!ranks.empty()) ranks += ',';
      ranks += std::to_string(r);
    }
    Send(c, "clique " + ranks);
  } else if (verb == "abort") {
    End(AbortKind::kFailed, "rank " + std::to_string(c.rank) + " on " + HostOf(hosts_[c.rank]) + ": " + rest);
  } else {
    Send(c, "error unknown request " + verb);
  }
}

void Tracker::Handle(Connection& c, const std::string& line) {
  c.last_heard = std::chrono::steady_clock::now();
  if (c.role == Connection::Role::kNew) return Admit(c, line);
  auto [verb, rest] = SplitVerb(line);
  if (c.role == Connection::Role::kControl) return HandleControl(c, verb, rest);
  HandlePmi(c, verb, rest);
}

void Tracker::EndRendezvous() {
  std::vector<int> unclaimed;
  for (int r = 0; r < options_.world_size; ++r) {
    if (hosts_[r].empty()) unclaimed.push_back(r);
  }
  const int any = static_cast<int>(any_.size());
  const int arrived = options_.world_size - static_cast<int>(unclaimed.size()) + any;
  const std::string within = " never arrived within " + SecondsText(options_.rendezvous_timeout) + " (" +
                             std::to_string(arrived) + " of " + std::to_string(options_.world_size) + " did";
  if (any == 0) {
    return End(AbortKind::kTimeout, std::string(unclaimed.size() == 1 ? "rank " : "ranks ") +
                                        RankList(unclaimed) + within + ")");
  }
  // The ranks that came without one stand for some of the unclaimed ranks, but which is not
  // known: the message says how many of them are missing.
  End(AbortKind::kTimeout, std::to_string(unclaimed.size() - any) + " of ranks " + RankList(unclaimed) +
                               within + ", " + std::to_string(any) + " with no rows)");
}

TrackerOutcome Tracker::Run() {
  const SteadyTime rendezvous_deadline = After(options_.rendezvous_timeout);
  SteadyTime next_ping = After(kPingSeconds);
  std::vector<pollfd> polled;
  while (!ended_) {
    polled.assign(1, pollfd{listener_.get(), POLLIN, 0});
    for (auto& c : connections_) polled.push_back(pollfd{c->channel.fd(), POLLIN, 0});
    ::poll(polled.data(), polled.size(), 200);

    const size_t existing = connections_.size();
    for (size_t i = 0; i < existing && !ended_; ++i) {
      if (!polled[i + 1].revents) continue;
      Connection& c = *connections_[i];
      const bool alive = c.channel.Fill();
      std::string line;
      while (!ended_ && c.channel.open() && c.channel.TakeLine(&line)) Handle(c, line);
      if (alive || ended_ || !c.channel.open()) continue;
      c.channel.Close();
      if (c.role == Connection::Role::kControl && (c.rank == kAnyRank || !finished_[c.rank])) {
        if (c.rank != kAnyRank) control_[c.rank] = nullptr;
        End(AbortKind::kLost,
            Who(c.rank) + " on " + HostOf(c.host) + " was lost: its connection from " + c.peer +
                (c.channel.timed_out()
                     ? " stopped answering before it finished (its host went down or the network was cut)"
                     : " closed before it finished (the process died, was killed, or lost the network)"));
      } else if (c.role == Connection::Role::kPmi && c.in_barrier) {
        --in_barrier_;
      }
    }
    if (polled[0].revents & POLLIN) Accept();
    for (Connection*& c : control_) {
      if (c && !c->channel.open()) c = nullptr;
    }
    any_.erase(std::remove_if(any_.begin(), any_.end(), [](Connection* c) { return !c->channel.open(); }),
               any_.end());
    connections_.erase(std::remove_if(connections_.begin(), connections_.end(),
                                      [](const auto& c) { return !c->channel.open(); }),
                       connections_.end());
    if (ended_) break;

    const SteadyTime now = std::chrono::steady_clock::now();
    if (!started_ && now >= rendezvous_deadline) {
      EndRendezvous();
      break;
    }
    if (now >= next_ping) {
      next_ping = After(kPingSeconds);
      for (Connection* c : any_) Send(*c, "ping");
      for (Connection* c : control_) {
        if (!c || finished_[c->rank]) continue;
        // Before the start a rank only waits (it pings once training runs); the rendezvous
        // timeout covers that time.
        if (started_ && now - c->last_heard > std::chrono::duration<double>(options_.heartbeat_timeout)) {
          End(AbortKind::kLost, "rank " + std::to_string(c->rank) + " on " + HostOf(c->host) + " (" + c->peer +
                                    ") was lost: silent for " + SecondsText(options_.heartbeat_timeout) +
                                    " (host down or network cut)");
          break;
        }
        Send(*c, "ping");
      }
    }
  }
  // Whatever was said last reaches the ranks before the sockets close.
  for (auto& c : connections_) ::shutdown(c->channel.fd(), SHUT_WR);
  return outcome_;
}

std::string RankList(const std::vector<int>& ranks) {
  std::string text;
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (i > 0) text += i + 1 == ranks.size() ? " and " : ", ";
    text += std::to_string(ranks[i]);
  }
  return text;
}

}  // namespace sparktorch
