#include "core/ps/parameter_server.h"

#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <thread>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/net/errors.h"
#include "core/ps/ps_client.h"
#include "core/train/metrics.h"
#include "core/train/optimizer.h"
#include "formats/error.h"

namespace sparktorch {
namespace {

// A parameter server for one tensor [1, 2, 3, 4] with SGD at lr 0.5, serving on a thread.
class ServerFixture {
 public:
  explicit ServerFixture(ParameterServerOptions options) {
    weights_ = torch::tensor({1.f, 2.f, 3.f, 4.f});
    weights_.set_requires_grad(true);
    options.listen = Address{"127.0.0.1", 0};
    options.model = "model bytes";
    options.optimizer = CompleteOptimizerSpec({{"type", "sgd"}, {"lr", 0.5}});
    server_ = std::make_unique<ParameterServer>(options, std::vector<at::Tensor>{weights_});
    run_ = std::async(std::launch::async, [this] { return server_->Run(); });
  }

  PsClientOptions Client(int worker, int world_size, const std::string& secret = "") const {
    PsClientOptions c;
    c.server = Address{"127.0.0.1", server_->port()};
    c.worker = worker;
    c.world_size = world_size;
    c.secret = secret;
    c.timeout = 10;
    return c;
  }

  ParameterServerReport Report() { return run_.get(); }
  const torch::Tensor& weights() const { return weights_; }

 private:
  torch::Tensor weights_;
  std::unique_ptr<ParameterServer> server_;
  std::future<ParameterServerReport> run_;
};

std::vector<float> Floats(const std::string& bytes) {
  const float* p = reinterpret_cast<const float*>(bytes.data());
  return std::vector<float>(p, p + bytes.size() / sizeof(float));
}

ParameterServerOptions World(int n) {
  ParameterServerOptions o;
  o.world_size = n;
  o.rendezvous_timeout = 20;
  return o;
}

TEST(ParameterServer, PushAppliesTheOptimizerAndPullSeesIt) {
  ServerFixture server(World(1));
  PsClient client(server.Client(0, 1));
  EXPECT_EQ(client.welcome().model(), "model bytes");
  EXPECT_EQ(client.num_parameters(), 4);
  const ps::Weights& w0 = client.Pull(false);
  EXPECT_EQ(w0.version(), 0u);
  EXPECT_EQ(Floats(w0.data()), (std::vector<float>{1, 2, 3, 4}));
  const float gradient[4] = {2, 2, 2, 2};
  const ps::PushAck& ack = client.Push(0, 8, gradient, 0.5, false);
  EXPECT_TRUE(ack.applied());
  EXPECT_EQ(ack.version(), 1u);
  EXPECT_EQ(Floats(client.Pull(false).data()), (std::vector<float>{0, 1, 2, 3}));
  const ps::Weights& final_weights = client.Finish("{\"worker\": 0}");
  EXPECT_EQ(Floats(final_weights.data()), (std::vector<float>{0, 1, 2, 3}));

  ParameterServerReport report = server.Report();
  EXPECT_EQ(report.updates, 1);
  EXPECT_EQ(report.dropped, 0);
  EXPECT_EQ(report.version, 1u);
  EXPECT_EQ(report.finished, std::vector<int>{0});
  EXPECT_TRUE(report.lost.empty());
  ASSERT_EQ(report.worker_summaries.size(), 1u);
  EXPECT_EQ(report.worker_summaries[0]["worker"], 0);
  // The parameter holds the final weights, in storage of its own again.
  EXPECT_TRUE(torch::equal(server.weights(), torch::tensor({0.f, 1.f, 2.f, 3.f})));
}

TEST(ParameterServer, APushThatAsksForTheWeightsGetsThoseAfterIt) {
  ServerFixture server(World(1));
  PsClient client(server.Client(0, 1));
  client.Pull(false);
  const float gradient[4] = {2, 2, 2, 2};
  EXPECT_EQ(client.Push(0, 8, gradient, 0.5, false, /*pull=*/true).version(), 1u);
  EXPECT_EQ(client.weights().version(), 1u);
  EXPECT_EQ(Floats(client.weights().data()), (std::vector<float>{0, 1, 2, 3}));
  EXPECT_EQ(client.pulls(), 2);
  // Without asking, a push is answered by its PushAck alone: the next exchange is in step.
  EXPECT_EQ(client.Push(1, 8, gradient, 0.5, false).version(), 2u);
  EXPECT_EQ(Floats(client.Pull(false).data()), (std::vector<float>{-1, 0, 1, 2}));
  client.Finish("{}");
  EXPECT_EQ(server.Report().updates, 2);
}

TEST(ParameterServer, FramesWithTheTensorOutsideTheMessageDecodeLikeAnyOther) {
  // SendWithTensor's hand-made encoding must be what protobuf makes of the whole message.
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  FrameConnection writer{Fd(fds[0])}, reader{Fd(fds[1])};
  ps::Message m;
  m.mutable_push()->set_base_version(300);
  m.mutable_push()->set_rows(64);
  m.mutable_push()->set_loss(0.25);
  std::vector<float> tensor(40000);
  for (size_t i = 0; i < tensor.size(); ++i) tensor[i] = static_cast<float>(i) * 0.5f;
  std::thread send([&] {
    writer.SendWithTensor(m, ps::Push::kGradientsFieldNumber, tensor.data(), tensor.size() * 4, After(5));
  });
  ps::Message got;
  std::string why;
  ASSERT_EQ(reader.Receive(&got, 1 << 20, After(5), &why), FrameConnection::Status::kOk) << why;
  send.join();
  ps::Message expected = m;
  expected.mutable_push()->set_gradients(tensor.data(), tensor.size() * 4);
  EXPECT_EQ(got.SerializeAsString(), expected.SerializeAsString());
}

TEST(ParameterServer, GradientsStalerThanTheBoundAreDroppedAndCounted) {
  ParameterServerOptions o = World(2);
  o.max_staleness = 0;
  ServerFixture server(o);
  PsClient a(server.Client(0, 2)), b(server.Client(1, 2));
  const float gradient[4] = {1, 1, 1, 1};
  a.Pull(false);
  b.Pull(false);
  EXPECT_TRUE(a.Push(0, 1, gradient, 0, false).applied());
  const ps::PushAck& late = b.Push(0, 1, gradient, 0, false);
  EXPECT_FALSE(late.applied());
  EXPECT_EQ(late.staleness(), 1u);
  EXPECT_EQ(b.pushes_dropped(), 1);
  a.Finish("{}");
  b.Finish("{}");
  ParameterServerReport report = server.Report();
  EXPECT_EQ(report.updates, 1);
  EXPECT_EQ(report.dropped, 1);
  EXPECT_EQ(report.max_staleness, 1u);
  EXPECT_DOUBLE_EQ(report.mean_staleness, 0.5);
}

TEST(ParameterServer, AWrongSecretIsRefusedAndTheJobGoesOn) {
  ParameterServerOptions o = World(1);
  o.secret = "the job's secret";
  ServerFixture server(o);
  EXPECT_THROW(PsClient(server.Client(0, 1, "a guess")), RefusedError);
  PsClient good(server.Client(0, 1, "the job's secret"));
  good.Finish("{}");
  ParameterServerReport report = server.Report();
  EXPECT_EQ(report.refused_connections, 1);
  EXPECT_EQ(report.finished, std::vector<int>{0});
}

TEST(ParameterServer, ADuplicateWorkerOrAWrongWorldIsRefusedWithTheReason) {
  ServerFixture server(World(2));
  PsClient first(server.Client(0, 2));
  try {
    PsClient again(server.Client(0, 2));
    FAIL() << "a second worker 0 was admitted";
  } catch (const RefusedError& e) {
    EXPECT_NE(std::string(e.what()).find("worker 0 already joined this job"), std::string::npos) << e.what();
  }
  try {
    PsClient wrong(server.Client(1, 3));
    FAIL() << "a worker of a 3-worker job was admitted";
  } catch (const RefusedError& e) {
    EXPECT_NE(std::string(e.what()).find("says the job has 3 workers, this server serves 2"),
              std::string::npos) << e.what();
  }
  PsClient second(server.Client(1, 2));
  first.Finish("{}");
  second.Finish("{}");
  EXPECT_EQ(server.Report().refused_connections, 2);
}

TEST(ParameterServer, ConnectionsBeyondOnePerWorkerAndSixtyFourMoreAreClosedAtOnce) {
  ServerFixture server(World(1));
  const Address address{"127.0.0.1", server.Client(0, 1).server.port};
  std::vector<Fd> silent;
  unsigned char header[4];
  for (int i = 0; i < 65; ++i) {  // each is challenged, and says nothing
    silent.push_back(Connect(address, After(5), "the server"));
    ASSERT_EQ(ReadFully(silent.back().get(), header, 4, After(5)), IoStatus::kOk) << i;
  }
  try {
    PsClient one_too_many(server.Client(0, 1));
    FAIL() << "the 66th connection was served";
  } catch (const RefusedError& e) {
    EXPECT_NE(std::string(e.what()).find("refused the connection: 65 connections are open already"),
              std::string::npos) << e.what();
  }
  silent.clear();
  // The server takes its worker once the silent connections are gone.
  for (int attempt = 0;; ++attempt) {
    try {
      PsClient worker(server.Client(0, 1));
      worker.Finish("{}");
      break;
    } catch (const RefusedError&) {  // the silent connections may not all be gone yet
      ASSERT_LT(attempt, 50) << "the server never took its worker";
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  ParameterServerReport report = server.Report();
  EXPECT_EQ(report.finished, std::vector<int>{0});
  EXPECT_GE(report.refused_connections, 66);
}

TEST(ParameterServer, ALostWorkerIsReportedAndTheOthersFinish) {
  ServerFixture server(World(2));
  PsClient survivor(server.Client(1, 2));
  {
    PsClient doomed(server.Client(0, 2));
    doomed.Pull(false);
  }  // its connection closes mid-job
  survivor.Pull(false);
  survivor.Finish("{}");
  ParameterServerReport report = server.Report();
  EXPECT_EQ(report.finished, std::vector<int>{1});
  ASSERT_EQ(report.lost.count(0), 1u);
  EXPECT_EQ(report.lost[0], "connection closed");
}

TEST(ParameterServer, AWorkerThatNeverArrivesIsLostAfterTheRendezvousTimeout) {
  ParameterServerOptions o = World(2);
  o.rendezvous_timeout = 0.5;
  ServerFixture server(o);
  PsClient only(server.Client(0, 2));
  only.Finish("{}");
  ParameterServerReport report = server.Report();
  EXPECT_EQ(report.finished, std::vector<int>{0});
  EXPECT_EQ(report.lost[1], "never connected within 0.5 s");
}

TEST(ParameterServer, TheWelcomeSaysTheWorkerItsId) {
  ServerFixture server(World(2));
  PsClient one(server.Client(1, 2));
  EXPECT_EQ(one.welcome().worker(), 1);
  EXPECT_EQ(one.worker(), 1);
  PsClient zero(server.Client(0, 2));
  EXPECT_EQ(zero.worker(), 0);
  one.Finish("{}");
  zero.Finish("{}");
  server.Report();
}

TEST(ParameterServer, AWorkerWithoutAnIdWaitsForTheOthersAndGetsTheIdNobodyClaimed) {
  ServerFixture server(World(3));
  PsClient two(server.Client(2, 3));
  // Until worker 0 comes, the server cannot know which id is left: the worker without one waits.
  auto any = std::async(std::launch::async, [&server] {
    return std::make_unique<PsClient>(server.Client(-1, 3));
  });
  EXPECT_EQ(any.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout);
  PsClient zero(server.Client(0, 3));
  std::unique_ptr<PsClient> one = any.get();
  EXPECT_EQ(one->worker(), 1);
  EXPECT_EQ(one->welcome().worker(), 1);
  for (PsClient* c : {&two, &zero, one.get()}) c->Finish("{}");
  ParameterServerReport report = server.Report();
  EXPECT_EQ(report.finished.size(), 3u);
  EXPECT_TRUE(report.lost.empty());
}

TEST(ParameterServer, WorkersWithoutAnIdGetTheLowestIdsLeftInTheOrderTheyCame) {
  ServerFixture server(World(3));
  auto first = std::async(std::launch::async, [&server] {
    return std::make_unique<PsClient>(server.Client(-1, 3));
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the first to come
  auto second = std::async(std::launch::async, [&server] {
    return std::make_unique<PsClient>(server.Client(-1, 3));
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  PsClient one(server.Client(1, 3));
  std::unique_ptr<PsClient> a = first.get(), b = second.get();
  EXPECT_EQ(a->worker(), 0);
  EXPECT_EQ(b->worker(), 2);
  for (PsClient* c : {a.get(), b.get(), &one}) c->Finish("{}");
  EXPECT_EQ(server.Report().finished.size(), 3u);
}

TEST(ParameterServer, AtTheRendezvousTimeoutAWorkerWithoutAnIdTakesAnAbsentOnesId) {
  ParameterServerOptions o = World(3);
  o.rendezvous_timeout = 0.5;
  ServerFixture server(o);
  PsClient zero(server.Client(0, 3));
  PsClient any(server.Client(-1, 3));  // waits until the timeout: worker 1 or 2 might still come
  EXPECT_EQ(any.worker(), 1);
  zero.Finish("{}");
  any.Finish("{}");
  ParameterServerReport report = server.Report();
  std::sort(report.finished.begin(), report.finished.end());  // in the order the server saw it
  EXPECT_EQ(report.finished, (std::vector<int>{0, 1}));
  ASSERT_EQ(report.lost.size(), 1u);
  EXPECT_EQ(report.lost[2], "never connected within 0.5 s");
}

// Spark retries a failed task of a hogwild stage with the same partition.
TEST(ParameterServer, AWorkerCountedAsLostIsRefusedAsLost) {
  ServerFixture server(World(2));
  PsClient survivor(server.Client(1, 2));
  {
    PsClient doomed(server.Client(0, 2));
    doomed.Pull(false);
  }  // its connection closes mid-job
  for (int attempt = 0;; ++attempt) {  // until the server has seen the connection close
    try {
      PsClient retry(server.Client(0, 2));
      FAIL() << "a lost worker was taken back";
    } catch (const WorkerCountedLost& e) {
      EXPECT_EQ(e.worker(), 0);
      EXPECT_EQ(e.reason(), "connection closed");
      EXPECT_EQ(std::string(e.what()),
                "the parameter server at 127.0.0.1:" + std::to_string(server.Client(0, 2).server.port) +
                    " refused worker 0: worker 0 was lost earlier in this job (connection closed); a "
                    "job does not take a worker back");
      break;
    } catch (const RefusedError& e) {  // "already joined": the close is not seen yet
      ASSERT_LT(attempt, 50) << e.what();
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  // A worker without rows finds no id left but the lost one: a retry too.
  try {
    PsClient any(server.Client(-1, 2));
    FAIL() << "a worker without an id was admitted with none left";
  } catch (const WorkerCountedLost& e) {
    EXPECT_EQ(e.worker(), 0);
    EXPECT_EQ(e.reason(), "connection closed");
    EXPECT_NE(std::string(e.what()).find(
                  "refused a worker with no rows: no worker id is left for a worker with no rows: "
                  "worker 0 was counted as lost earlier in this job (connection closed)"),
              std::string::npos)
        << e.what();
  }
  survivor.Finish("{}");
  ParameterServerReport report = server.Report();
  EXPECT_EQ(report.finished, std::vector<int>{1});
  EXPECT_GE(report.refused_connections, 2);
}

TEST(ParameterServer, AWorkerAfterTheRendezvousTimeoutIsRefusedAsLost) {
  ParameterServerOptions o = World(2);
  o.rendezvous_timeout = 0.3;
  ServerFixture server(o);
  PsClient zero(server.Client(0, 2));
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  try {
    PsClient late(server.Client(1, 2));
    FAIL() << "a worker was admitted after the rendezvous timeout";
  } catch (const WorkerCountedLost& e) {
    EXPECT_EQ(e.worker(), 1);
    EXPECT_EQ(e.reason(), "never connected within 0.3 s");
  }
  zero.Finish("{}");
  server.Report();
}

TEST(ParameterServer, OtherRefusalsAreNotLost) {
  ServerFixture server(World(1));
  PsClient only(server.Client(0, 1));
  try {
    PsClient again(server.Client(0, 1));
    FAIL() << "a second worker 0 was admitted";
  } catch (const WorkerCountedLost& e) {
    FAIL() << "refused as lost: " << e.what();
  } catch (const RefusedError& e) {
    EXPECT_NE(std::string(e.what()).find("worker 0 already joined this job"), std::string::npos);
  }
  try {
    PsClient any(server.Client(-1, 1));
    FAIL() << "a worker without an id was admitted with none left";
  } catch (const WorkerCountedLost& e) {
    FAIL() << "refused as lost: " << e.what();
  } catch (const RefusedError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "no worker id is left for a worker with no rows: all 1 workers have joined this job"),
              std::string::npos)
        << e.what();
  }
  only.Finish("{}");
  server.Report();
}

TEST(ParameterServer, DecidedEpochsCarryTheirTimesAndThePlannedEpochs) {
  ServerFixture server(World(2));
  PsClient a(server.Client(0, 2)), b(server.Client(1, 2));
  auto report = [](int epoch, int epochs) {
    ps::EpochReport r;
    r.set_epoch(epoch);
    r.set_epochs(epochs);
    r.set_rows(100);
    r.set_train_loss(0.5);
    return r;
  };
  a.ReportEpoch(report(1, 3));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  b.ReportEpoch(report(1, 4));
  a.Finish("{}");
  b.Finish("{}");
  ParameterServerReport r = server.Report();
  ASSERT_EQ(r.epochs.size(), 1u);
  EXPECT_EQ(r.epochs[0].epochs, 4);  // the most any worker trains
  EXPECT_EQ(r.epochs[0].rows, 200);
  EXPECT_GE(r.epochs[0].seconds, 0.1);
  EXPECT_DOUBLE_EQ(r.epochs[0].elapsed, r.epochs[0].seconds);  // the first epoch
  EXPECT_DOUBLE_EQ(r.epochs[0].samples_per_second, 200 / r.epochs[0].seconds);
}

TEST(ParameterServer, DecidedEpochsAddUpTheWorkersMetricSums) {
  ServerFixture server(World(2));
  PsClient a(server.Client(0, 2)), b(server.Client(1, 2));
  // A regression over 2 rows on one worker and 1 on the other: the server's mse, mae and r2 are
  // those of the 3 rows together, not a mean of the workers'.
  const torch::Tensor out_a = torch::tensor({{0.5F}, {1.5F}}), y_a = torch::tensor({{1.0F}, {1.0F}});
  const torch::Tensor out_b = torch::tensor({{3.0F}}), y_b = torch::tensor({{2.0F}});
  MetricSums sums_a("mse", 1), sums_b("mse", 1), together("mse", 1);
  sums_a.Add(out_a, y_a);
  sums_b.Add(out_b, y_b);
  together.Add(torch::cat({out_a, out_b}), torch::cat({y_a, y_b}));
  auto report = [](const MetricSums& sums, int64_t rows) {
    ps::EpochReport r;
    r.set_epoch(1);
    r.set_rows(rows);
    r.set_train_loss(0.5);
    r.set_metric_loss(sums.loss());
    r.set_metric_outputs(sums.outputs());
    for (double v : sums.sums()) r.add_train_metric_sums(v);
    return r;
  };
  a.ReportEpoch(report(sums_a, 2));
  b.ReportEpoch(report(sums_b, 1));
  a.Finish("{}");
  b.Finish("{}");
  ParameterServerReport r = server.Report();
  ASSERT_EQ(r.epochs.size(), 1u);
  const MetricList expected = together.Others();
  ASSERT_EQ(r.epochs[0].train_metrics.size(), 3u);
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(r.epochs[0].train_metrics[i].first, expected[i].first);
    EXPECT_NEAR(r.epochs[0].train_metrics[i].second, expected[i].second, 1e-12) << expected[i].first;
  }
  EXPECT_EQ(r.epochs[0].train_metrics[0].first, "mse");
  EXPECT_NEAR(r.epochs[0].train_metrics[0].second, (0.25 + 0.25 + 1.0) / 3, 1e-12);
  EXPECT_TRUE(r.epochs[0].validation_metrics.empty());  // no validation sums were reported
}

TEST(ParameterServer, EarlyStoppingIsDecidedWhenEveryWorkerReportedTheEpoch) {
  ParameterServerOptions o = World(2);
  o.early_stop_patience = 1;
  ServerFixture server(o);
  PsClient a(server.Client(0, 2)), b(server.Client(1, 2));
  auto report = [](int epoch, double loss) {
    ps::EpochReport r;
    r.set_epoch(epoch);
    r.set_rows(100);
    r.set_train_loss(loss);
    return r;
  };
  EXPECT_FALSE(a.ReportEpoch(report(1, 1.0)));
  EXPECT_FALSE(b.ReportEpoch(report(1, 1.0)));
  EXPECT_FALSE(a.ReportEpoch(report(2, 1.5)));  // epoch 2 is not decided before b reports it
  EXPECT_TRUE(b.ReportEpoch(report(2, 1.5)));   // worse than epoch 1: patience 1 is spent
  EXPECT_TRUE(a.Pull(false).stop());
  a.Finish("{}");
  b.Finish("{}");
  ParameterServerReport r = server.Report();
  EXPECT_TRUE(r.stopped_early);
  ASSERT_EQ(r.epochs.size(), 2u);
  EXPECT_EQ(r.epochs[1].workers, 2);
  EXPECT_DOUBLE_EQ(r.epochs[1].train_loss, 1.5);
}

TEST(ParameterServer, TheLockSerialisesPullToPushAcrossWorkers) {
  ParameterServerOptions o = World(2);
  o.lock = true;
  ServerFixture server(o);
  PsClient a(server.Client(0, 2)), b(server.Client(1, 2));
  EXPECT_TRUE(a.welcome().lock());
  a.Pull(true);  // a holds the lock
  auto b_pull = std::async(std::launch::async, [&b] { return b.Pull(true).version(); });
  EXPECT_EQ(b_pull.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout);
  const float gradient[4] = {1, 1, 1, 1};
  a.Push(0, 1, gradient, 0, /*release_lock=*/true);
  // b gets the lock only now, and with it the weights a's push made.
  EXPECT_EQ(b_pull.get(), 1u);
  EXPECT_EQ(b.Push(1, 1, gradient, 0, true).staleness(), 0u);
  a.Finish("{}");
  b.Finish("{}");
  EXPECT_EQ(server.Report().max_staleness, 0u);
}

}  // namespace
}  // namespace sparktorch
