#include "core/world/tracker_link.h"

#include <sys/socket.h>

#include <spdlog/spdlog.h>

#include "core/net/errors.h"
#include "formats/error.h"
#include "formats/records.h"

namespace sparktorch {
namespace {

// Once the tracker has admitted a rank, the tracker decides when the wait for the others ends
// (it tells every rank why); the rank's own --timeout is then a backstop this much later. A
// tracker that started after its ranks (the Spark driver starts the tasks while serve is still
// loading) would otherwise lose the race to the ranks' clocks and report only a lost rank.
constexpr std::chrono::seconds kTrackerDecidesFirst(5);

}  // namespace

TrackerLink::TrackerLink(const TrackerLinkOptions& options) : options_(options), rank_(options.rank) {
  const std::string where = "the tracker at " + options_.tracker.ToString();
  const std::string who = options_.rank == kAnyRank ? std::string("this rank with no rows")
                                                    : "rank " + std::to_string(options_.rank);
  const SteadyTime deadline = After(options_.timeout);
  channel_ = LineChannel(Connect(options_.tracker, deadline, "the tracker"));
  DetectDeadPeer(channel_.fd(), kDeadPeerMillis);

  std::string line;
  if (channel_.ReadLine(&line, deadline) != LineChannel::Status::kLine ||
      line.rfind(std::string(kTrackerGreeting) + " ", 0) != 0) {
    throw RendezvousError(options_.tracker.ToString() + " is not a sparktorch tracker (it did not greet)");
  }
  const std::string nonce = line.substr(std::string(kTrackerGreeting).size() + 1);
  Hello hello{"control", options_.job, options_.rank, options_.world_size, HostKey(), ""};
  hello.mac = HelloMac(options_.secret, nonce, hello);
  if (!channel_.WriteLine(FormatHello(hello), deadline)) {
    throw PeerError(where + " closed the connection", false);
  }
  // Answers until the start: "ok", then pings, then "start JOB"; or "refused"/"abort".
  bool admitted = false;
  for (;;) {
    LineChannel::Status status = channel_.ReadLine(&line, admitted ? deadline + kTrackerDecidesFirst : deadline);
    if (status == LineChannel::Status::kTimeout) {
      throw RendezvousError("not every rank arrived at " + where + " within " +
                            SecondsText(options_.timeout));
    }
    if (status == LineChannel::Status::kClosed) {
      throw PeerError(where + " closed the connection before the job started", false);
    }
    auto [verb, rest] = SplitVerb(line);
    if (verb == "ok") admitted = true;
    if (verb == "ok" || verb == "ping") continue;
    if (verb == "refused") {
      throw RefusedError(where + " refused " + who + ": " + rest);
    }
    if (verb == "abort") {
      auto [kind, message] = SplitVerb(rest);
      if (ParseAbortKind(kind) == AbortKind::kTimeout) throw RendezvousError(message);
      throw PeerError(message, ParseAbortKind(kind) == AbortKind::kFailed);
    }
    if (verb == "start") {
      std::optional<Start> start = ParseStart(rest);
      if (!start || start->rank < 0 || start->rank >= options_.world_size ||
          (options_.rank != kAnyRank && start->rank != options_.rank)) {
        throw PeerError(where + " sent a start line this rank cannot use: \"" + line.substr(0, 100) + "\"",
                        false);
      }
      job_id_ = start->job;
      rank_ = start->rank;
      return;
    }
  }
}

TrackerLink::~TrackerLink() {
  StopSending();
  StopWatching();
}

bool TrackerLink::Say(const std::string& line) {
  std::lock_guard<std::mutex> lock(write_mutex_);
  return channel_.WriteLine(line, After(2));
}

void TrackerLink::Watch(AbortHandler on_abort) {
  watcher_ = std::thread([this, on_abort] {
    SteadyTime next_ping = After(kPingSeconds);
    SteadyTime last_heard = std::chrono::steady_clock::now();
    const std::string where = "the tracker at " + options_.tracker.ToString();
    std::string line;
    while (!stop_) {
      LineChannel::Status status = channel_.ReadLine(&line, std::min(next_ping, After(0.2)));
      if (stop_) return;
      if (status == LineChannel::Status::kLine) {
        last_heard = std::chrono::steady_clock::now();
        auto [verb, rest] = SplitVerb(line);
        if (verb == "abort") {
          auto [kind, message] = SplitVerb(rest);
          on_abort(ParseAbortKind(kind).value_or(AbortKind::kLost), message);
        }
        continue;
      }
      if (status == LineChannel::Status::kClosed) {
        on_abort(AbortKind::kLost, where + (channel_.timed_out()
                                                ? " was lost: it stopped answering (its host went down or the "
                                                  "network was cut)"
                                                : " was lost: the connection closed"));
      }
      const SteadyTime now = std::chrono::steady_clock::now();
      if (std::optional<std::string> missed = MissedExpectation(now)) {
        Say("fail " + *missed);
        on_abort(AbortKind::kTimeout, *missed);
      }
      if (now - last_heard > std::chrono::duration<double>(options_.heartbeat_timeout)) {
        on_abort(AbortKind::kLost, where + " was lost: silent for " +
                                       SecondsText(options_.heartbeat_timeout));
      }
      if (now >= next_ping) {
        next_ping = After(kPingSeconds);
        Say("ping");
      }
    }
  });
}

void TrackerLink::Expect(SteadyTime deadline, const std::string& message) {
  std::lock_guard<std::mutex> lock(expect_mutex_);
  expect_deadline_ = deadline;
  expect_message_ = message;
  for (char& c : expect_message_) {
    if (c == '\n' || c == '\r') c = ' ';
  }
}

void TrackerLink::Connected() {
  std::lock_guard<std::mutex> lock(expect_mutex_);
  expect_deadline_.reset();
}

std::optional<std::string> TrackerLink::MissedExpectation(SteadyTime now) {
  std::lock_guard<std::mutex> lock(expect_mutex_);
  if (!expect_deadline_ || now < *expect_deadline_) return std::nullopt;
  expect_deadline_.reset();
  return expect_message_;
}

void TrackerLink::StopWatching() {
  stop_ = true;
  if (watcher_.joinable()) watcher_.join();
}

void TrackerLink::Done() {
  StopSending();
  StopWatching();
  Say("done");
  ::shutdown(channel_.fd(), SHUT_WR);
}

void TrackerLink::ReportEpoch(const std::string& json) {
  std::string line = "epoch " + json;
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  {
    std::lock_guard<std::mutex> lock(send_mutex_);
    if (sender_.joinable()) {  // behind the checkpoints being sent
      pending_.emplace_back(-1, std::move(line));
      send_wake_.notify_one();
      return;
    }
  }
  Say(line);
}

bool TrackerLink::SendRecords(const char* verb, const std::string& model_bytes,
                              double line_seconds) {
  bool sent = true;
  std::string line;
  ModelRecordLines(model_bytes, [&](std::string_view record) {
    if (!sent || stop_sending_) {
      sent = false;
      return;
    }
    line.assign(verb);
    line.append("-record ");
    line.append(record.substr(0, record.size() - 1));  // without its '\n'
    std::lock_guard<std::mutex> lock(write_mutex_);
    sent = channel_.WriteLine(line, After(line_seconds));
  });
  return sent;
}

bool TrackerLink::SendCheckpoint(int epoch, const std::string& model_bytes, double line_seconds) {
  return SendRecords("checkpoint", model_bytes, line_seconds) &&
         Say("checkpoint " + std::to_string(epoch));
}

bool TrackerLink::SendModel(const std::string& model_bytes, double line_seconds) {
  {
    std::unique_lock<std::mutex> lock(send_mutex_);
    for (auto& item : pending_) {
      if (item.first >= 0) item.second.clear();  // a checkpoint the model supersedes
    }
    send_idle_.wait(lock, [this] { return stop_sending_ || (pending_.empty() && !sending_); });
    if (stop_sending_) return false;
  }
  return SendRecords("model", model_bytes, line_seconds) && Say("model");
}

void TrackerLink::SendCheckpointLater(int epoch, std::string model_bytes) {
  std::lock_guard<std::mutex> lock(send_mutex_);
  // A checkpoint still waiting is superseded; the reports behind it keep their place.
  for (auto& item : pending_) {
    if (item.first >= 0) item.second.clear();
  }
  pending_.emplace_back(epoch, std::move(model_bytes));
  if (!sender_.joinable()) sender_ = std::thread([this] { SendLoop(); });
  send_wake_.notify_one();
}

void TrackerLink::SendLoop() {
  for (;;) {
    std::pair<int, std::string> next;
    {
      std::unique_lock<std::mutex> lock(send_mutex_);
      sending_ = false;
      send_idle_.notify_all();
      send_wake_.wait(lock, [this] { return stop_sending_ || !pending_.empty(); });
      if (stop_sending_) return;
      next = std::move(pending_.front());
      pending_.pop_front();
      sending_ = true;
    }
    if (next.first < 0) {
      Say(next.second);
    } else if (!next.second.empty() && !SendCheckpoint(next.first, next.second) && !stop_sending_) {
      spdlog::warn("the checkpoint after epoch {} did not reach the tracker", next.first);
    }
  }
}

void TrackerLink::StopSending() {
  {
    std::lock_guard<std::mutex> lock(send_mutex_);
    stop_sending_ = true;
  }
  send_wake_.notify_one();
  send_idle_.notify_all();
  if (sender_.joinable()) sender_.join();
}

void TrackerLink::Fail(const std::string& message) {
  // This rank's own error decides its exit code, not the abort the tracker echoes back.
  StopSending();
  StopWatching();
  std::string line = "fail " + message;
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  Say(line);
  ::shutdown(channel_.fd(), SHUT_WR);
}

}  // namespace sparktorch
