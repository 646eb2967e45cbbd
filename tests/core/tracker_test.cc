#include "core/world/tracker.h"

#include <functional>
#include <future>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "core/net/socket.h"
#include "formats/records.h"

namespace sparktorch {
namespace {

// A tracker for `world_size` ranks on loopback, running on a thread, logging into log().
class TrackerFixture {
 public:
  explicit TrackerFixture(int world_size, double rendezvous_timeout = 20,
                          std::function<void(int, const std::string&)> on_checkpoint = {},
                          std::function<void(const std::string&)> on_model = {}) {
    logger_ = std::make_shared<spdlog::logger>(
        "tracker_test", std::make_shared<spdlog::sinks::ostream_sink_mt>(log_));
    previous_ = spdlog::default_logger();
    spdlog::set_default_logger(logger_);
    TrackerOptions options;
    options.listen = Address{"127.0.0.1", 0};
    options.world_size = world_size;
    options.job_id = 65537;
    options.rendezvous_timeout = rendezvous_timeout;
    options.on_checkpoint = std::move(on_checkpoint);
    options.on_model = std::move(on_model);
    tracker_ = std::make_unique<Tracker>(options);
    run_ = std::async(std::launch::async, [this] { return tracker_->Run(); });
  }
  ~TrackerFixture() {
    if (run_.valid()) run_.wait();
    spdlog::set_default_logger(previous_);
  }

  int port() const { return tracker_->port(); }
  TrackerOutcome Outcome() { return run_.get(); }
  std::string log() const {
    logger_->flush();
    return log_.str();
  }

 private:
  std::ostringstream log_;
  std::shared_ptr<spdlog::logger> logger_, previous_;
  std::unique_ptr<Tracker> tracker_;
  std::future<TrackerOutcome> run_;
};

// One rank's connection, as TrackerLink speaks it, line by line.
class Rank {
 public:
  Rank(int port, int rank, int world_size, const std::string& role = "control") {
    channel_ = LineChannel(Connect(Address{"127.0.0.1", port}, After(5), "the tracker"));
    std::string greeting;
    EXPECT_EQ(channel_.ReadLine(&greeting, After(5)), LineChannel::Status::kLine);
    EXPECT_EQ(greeting.rfind("sparktorch-tracker 1 ", 0), 0u) << greeting;
    Hello hello{role, "-", rank, world_size, "host-" + std::to_string(rank), "-"};
    EXPECT_TRUE(channel_.WriteLine(FormatHello(hello), After(5)));
  }

  // The next line that is not a ping; "<closed>" or "<timeout>" when none comes.
  std::string Next() {
    std::string line;
    for (;;) {
      switch (channel_.ReadLine(&line, After(10))) {
        case LineChannel::Status::kClosed:
          return "<closed>";
        case LineChannel::Status::kTimeout:
          return "<timeout>";
        case LineChannel::Status::kLine:
          if (line != "ping") return line;
      }
    }
  }
  void Say(const std::string& line) { EXPECT_TRUE(channel_.WriteLine(line, After(5))); }
  void Close() { channel_.Close(); }

 private:
  LineChannel channel_;
};

TEST(Tracker, RankListsReadAsEnglish) {
  EXPECT_EQ(RankList({3}), "3");
  EXPECT_EQ(RankList({2, 3}), "2 and 3");
  EXPECT_EQ(RankList({0, 2, 5}), "0, 2 and 5");
}

TEST(Tracker, RanksWithNoRowsGetTheUnclaimedRanksInArrivalOrder) {
  TrackerFixture tracker(4);
  Rank two(tracker.port(), 2, 4);
  EXPECT_EQ(two.Next(), "ok");
  Rank first_any(tracker.port(), kAnyRank, 4);
  EXPECT_EQ(first_any.Next(), "ok");
  Rank zero(tracker.port(), 0, 4);
  EXPECT_EQ(zero.Next(), "ok");
  Rank second_any(tracker.port(), kAnyRank, 4);
  EXPECT_EQ(second_any.Next(), "ok");

  EXPECT_EQ(two.Next(), "start 65537 2");
  EXPECT_EQ(first_any.Next(), "start 65537 1");
  EXPECT_EQ(zero.Next(), "start 65537 0");
  EXPECT_EQ(second_any.Next(), "start 65537 3");
  for (Rank* r : {&two, &first_any, &zero, &second_any}) r->Say("done");
  EXPECT_TRUE(tracker.Outcome().ok);

  const std::string log = tracker.log();
  EXPECT_NE(log.find("tracker: a rank with no rows arrived from 127.0.0.1:"), std::string::npos) << log;
  EXPECT_NE(log.find("(2 of 4)"), std::string::npos) << log;
  EXPECT_NE(log.find(" is rank 1, which no other rank claimed"), std::string::npos) << log;
  EXPECT_NE(log.find(" is rank 3, which no other rank claimed"), std::string::npos) << log;
  EXPECT_NE(log.find("tracker: all 4 ranks arrived; job 65537 starts"), std::string::npos) << log;
}

TEST(Tracker, OnlyRanksWithNoRows) {
  TrackerFixture tracker(2);
  Rank a(tracker.port(), kAnyRank, 2);
  Rank b(tracker.port(), kAnyRank, 2);
  EXPECT_EQ(a.Next(), "ok");
  EXPECT_EQ(b.Next(), "ok");
  EXPECT_EQ(a.Next(), "start 65537 0");
  EXPECT_EQ(b.Next(), "start 65537 1");
  a.Say("done");
  b.Say("done");
  EXPECT_TRUE(tracker.Outcome().ok);
}

TEST(Tracker, RendezvousTimeoutSaysHowManyOfTheUnclaimedRanksAreMissing) {
  TrackerFixture tracker(4, 1);
  Rank zero(tracker.port(), 0, 4);
  EXPECT_EQ(zero.Next(), "ok");
  Rank any(tracker.port(), kAnyRank, 4);
  EXPECT_EQ(any.Next(), "ok");
  const std::string message = "2 of ranks 1, 2 and 3 never arrived within 1 s (2 of 4 did, 1 with no rows)";
  EXPECT_EQ(zero.Next(), "abort timeout " + message);
  EXPECT_EQ(any.Next(), "abort timeout " + message);
  TrackerOutcome outcome = tracker.Outcome();
  EXPECT_FALSE(outcome.ok);
  EXPECT_EQ(outcome.kind, AbortKind::kTimeout);
  EXPECT_EQ(outcome.message, message);
}

TEST(Tracker, RendezvousTimeoutWithoutRanksWithNoRowsNamesTheMissing) {
  TrackerFixture tracker(3, 1);
  Rank one(tracker.port(), 1, 3);
  EXPECT_EQ(one.Next(), "ok");
  EXPECT_EQ(one.Next(), "abort timeout ranks 0 and 2 never arrived within 1 s (1 of 3 did)");
  EXPECT_EQ(tracker.Outcome().message, "ranks 0 and 2 never arrived within 1 s (1 of 3 did)");
}

TEST(Tracker, RanksAndRanksWithNoRowsBeyondTheWorldAreRefused) {
  TrackerFixture tracker(2);
  Rank zero(tracker.port(), 0, 2);
  EXPECT_EQ(zero.Next(), "ok");
  Rank again(tracker.port(), 0, 2);
  EXPECT_EQ(again.Next().rfind("refused rank 0 has arrived already (from 127.0.0.1:", 0), 0u);
  Rank wrong_world(tracker.port(), kAnyRank, 3);
  EXPECT_EQ(wrong_world.Next(),
            "refused a rank with no rows was started with --world-size 3; the tracker's is 2");
  Rank pmi(tracker.port(), kAnyRank, 2, "pmi");
  EXPECT_EQ(pmi.Next(), "refused rank -1 is out of range for a world of 2");
  Rank any(tracker.port(), kAnyRank, 2);
  EXPECT_EQ(any.Next(), "ok");
  EXPECT_EQ(zero.Next(), "start 65537 0");
  EXPECT_EQ(any.Next(), "start 65537 1");
  Rank late(tracker.port(), kAnyRank, 2);
  EXPECT_EQ(late.Next(),
            "refused a rank with no rows arrived, but every rank of this job has arrived already");
  zero.Say("done");
  any.Say("done");
  EXPECT_TRUE(tracker.Outcome().ok);
}

TEST(Tracker, ARankWithNoRowsLostBeforeTheStartEndsTheJob) {
  TrackerFixture tracker(3);
  Rank zero(tracker.port(), 0, 3);
  EXPECT_EQ(zero.Next(), "ok");
  {
    Rank any(tracker.port(), kAnyRank, 3);
    EXPECT_EQ(any.Next(), "ok");
    any.Close();
  }
  const std::string abort = zero.Next();
  EXPECT_EQ(abort.rfind("abort lost a rank with no rows on host--1 was lost: its connection from 127.0.0.1:", 0), 0u)
      << abort;
  EXPECT_EQ(tracker.Outcome().kind, AbortKind::kLost);
}

TEST(Tracker, LogsTheEpochsThatRankZeroReports) {
  TrackerFixture tracker(1);
  Rank zero(tracker.port(), 0, 1);
  EXPECT_EQ(zero.Next(), "ok");
  EXPECT_EQ(zero.Next(), "start 65537 0");
  zero.Say(R"(epoch {"epoch":1,"epochs":2,"train_loss":0.5,"train_accuracy":0.75,)"
           R"("samples_per_second":27989.6,"elapsed":4.1,"seconds":4.1,"rows":1000,"steps":16})");
  zero.Say(R"(epoch {"epoch":2,"epochs":2,"train_loss":0.25,"samples_per_second":30000,"elapsed":8.0})");
  zero.Say("epoch not json");
  zero.Say("done");
  EXPECT_TRUE(tracker.Outcome().ok);
  const std::string log = tracker.log();
  EXPECT_NE(log.find("] epoch 1/2: loss 0.5000 accuracy 0.7500 | 27989 samples/s, 4.1 s elapsed, "
                     "ETA 4.1 s\n"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("] epoch 2/2: loss 0.2500 | 30000 samples/s, 8.0 s elapsed\n"), std::string::npos)
      << log;
  EXPECT_NE(log.find("tracker: rank 0 sent an epoch report that is not one: not json"),
            std::string::npos)
      << log;
}

// Ranks 0 and 1 of a world of 2, admitted and started.
void ExpectStarted(Rank& zero, Rank& one) {
  EXPECT_EQ(zero.Next(), "ok");
  EXPECT_EQ(one.Next(), "ok");
  EXPECT_EQ(zero.Next(), "start 65537 0");
  EXPECT_EQ(one.Next(), "start 65537 1");
}

// `size` bytes that differ from one another, as a model file's do.
std::string TestModel(size_t size, int step) {
  std::string model(size, 'm');
  for (size_t i = 0; i < model.size(); ++i) model[i] = static_cast<char>(i * step);
  return model;
}

// A model file's records as rank 0 sends them, each on a `VERB-record` line (VERB: checkpoint
// or model), without the line that ends them; with `damage`, one chunk's base64 changed.
void SendRecords(Rank& rank, const std::string& verb, const std::string& model, bool damage) {
  const std::string prefix = verb + "-record ";
  ModelRecordLines(model, [&](std::string_view record) {
    std::string line = prefix + std::string(record.substr(0, record.size() - 1));
    if (damage && line[prefix.size()] == 'M') line[line.size() - 5] ^= 1;
    rank.Say(line);
  });
}

TEST(Tracker, KeepsRankZerosCheckpointsWholeAndDropsBadOnes) {
  std::vector<std::pair<int, std::string>> kept;
  TrackerFixture tracker(2, 20, [&kept](int epoch, const std::string& model) {
    kept.emplace_back(epoch, model);
  });
  Rank zero(tracker.port(), 0, 2);
  Rank one(tracker.port(), 1, 2);
  ExpectStarted(zero, one);
  // Two chunks (a model over kModelChunkBytes), then one whose chunk is damaged, then rank 1's.
  const std::string model = TestModel(kModelChunkBytes + 1000, 7);
  auto send = [&model](Rank& rank, int epoch, bool damage) {
    SendRecords(rank, "checkpoint", model, damage);
    rank.Say("checkpoint " + std::to_string(epoch));
  };
  send(zero, 3, false);
  send(zero, 4, true);
  send(one, 5, false);
  zero.Say("done");
  one.Say("done");
  EXPECT_TRUE(tracker.Outcome().ok);
  ASSERT_EQ(kept.size(), 1u) << tracker.log();
  EXPECT_EQ(kept[0].first, 3);
  EXPECT_TRUE(kept[0].second == model);
  const std::string log = tracker.log();
  EXPECT_NE(log.find("tracker: dropped a checkpoint from rank 0: rank 0's checkpoint:1: "),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("tracker: rank 1 sent a checkpoint; only rank 0's are kept"),
            std::string::npos)
      << log;
}

// Rank 0's model as `train --send-model` sends it: `model-record` lines, then `model`.
void SendModel(Rank& rank, const std::string& model, bool damage) {
  SendRecords(rank, "model", model, damage);
  rank.Say("model");
}

TEST(Tracker, KeepsRankZerosTrainedModelBeforeItsDone) {
  std::vector<std::string> kept;
  TrackerFixture tracker(2, 20, {}, [&kept](const std::string& model) { kept.push_back(model); });
  Rank zero(tracker.port(), 0, 2);
  Rank one(tracker.port(), 1, 2);
  ExpectStarted(zero, one);
  const std::string model = TestModel(kModelChunkBytes + 1000, 13);
  SendModel(zero, model, false);
  zero.Say("done");
  one.Say("done");
  EXPECT_TRUE(tracker.Outcome().ok);
  ASSERT_EQ(kept.size(), 1u) << tracker.log();
  EXPECT_TRUE(kept[0] == model);
}

TEST(Tracker, AModelItCannotKeepFailsTheJob) {
  std::string model(5000, 'x');
  struct Case {
    const char* what;
    bool keeps;       // the tracker has on_model
    bool damage;      // a chunk's base64 changed
    int sender;       // the rank that sends it
    std::string why;  // the failure's message
  };
  const std::vector<Case> cases = {
      {"damaged", true, true, 0,
       "rank 0 sent its trained model, and the tracker could not keep it: rank 0's trained "
       "model:1: "},
      {"nowhere to keep it", false, false, 0,
       "rank 0 sent its trained model, and the tracker could not keep it: this tracker keeps no "
       "model (serve without --output FILE)"},
      {"from rank 1", true, false, 1, "rank 1 sent a trained model; only rank 0 sends one"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    std::vector<std::string> kept;
    std::function<void(const std::string&)> keep;
    if (c.keeps) keep = [&kept](const std::string& m) { kept.push_back(m); };
    TrackerFixture tracker(2, 20, {}, keep);
    Rank zero(tracker.port(), 0, 2);
    Rank one(tracker.port(), 1, 2);
    ExpectStarted(zero, one);
    SendModel(c.sender == 0 ? zero : one, model, c.damage);
    const TrackerOutcome outcome = tracker.Outcome();
    EXPECT_FALSE(outcome.ok);
    EXPECT_EQ(outcome.kind, AbortKind::kFailed);
    EXPECT_EQ(outcome.message.rfind(c.why, 0), 0u) << outcome.message;
    EXPECT_EQ(zero.Next().rfind("abort failed " + c.why, 0), 0u);
    EXPECT_TRUE(kept.empty());
  }
}

}  // namespace
}  // namespace sparktorch
