// Round trips between a hogwild worker and the parameter server over loopback, for the
// 269,322-parameter MLP of examples/fashion_mnist_mlp.json (784-256-256-10): a pull of the
// weights, a push of a full gradient (with the server's SGD step), and the two back to back as a
// worker does every step. The server runs in-process on its own thread; one PsClient is worker 0
// of a one-worker job. BM_PushWithPull is the single round trip workers make without --lock.
// Time is per round trip (UseRealTime: the server works on other threads);
// the MB counter is the float32 payload moved both ways per second (1 MB = 1e6 bytes; shown as
// "MB=1.4k/s" for 1,400 MB/s). The "DEBUG" warning Google Benchmark may print is about its own
// library, not this code. Issue target: a pull+push round trip under 2 ms on loopback. Never
// passes or fails on time; it reports an error only when the server did not apply every push.

#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <benchmark/benchmark.h>
#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include "core/device.h"
#include "core/ps/parameter_server.h"
#include "core/ps/ps_client.h"
#include "core/train/optimizer.h"

namespace sparktorch {
namespace {

// The MLP's parameters, as torch.nn.Linear lays them out.
std::vector<at::Tensor> MlpParameters() {
  torch::manual_seed(0);
  return {torch::randn({256, 784}) * 0.05, torch::zeros({256}),
          torch::randn({256, 256}) * 0.05, torch::zeros({256}),
          torch::randn({10, 256}) * 0.05,  torch::zeros({10})};
}

// A parameter server on 127.0.0.1 serving on its own thread, with worker 0 connected. Stop()
// finishes the worker, which ends the server's Run.
class LoopbackJob {
 public:
  LoopbackJob() {
    ConfigureCpu(1);  // as `sparktorch serve` and `train` do: malloc thresholds, one thread
    spdlog::set_level(spdlog::level::warn);  // stdout is the benchmark's table
    ParameterServerOptions options;
    options.listen = Address{"127.0.0.1", 0};
    options.world_size = 1;
    options.rendezvous_timeout = 10;  // a client that cannot connect ends the server soon
    // Workers build their model from Welcome.model; this one only moves floats, so any bytes do.
    options.model = "ps_bench: no model";
    options.optimizer = CompleteOptimizerSpec({{"type", "sgd"}, {"lr", 0.01}});
    server_ = std::make_unique<ParameterServer>(std::move(options), MlpParameters());
    thread_ = std::thread([this] {
      try {
        report_ = server_->Run();
      } catch (...) {
        error_ = std::current_exception();
      }
    });
    PsClientOptions c;
    c.server = Address{"127.0.0.1", server_->port()};
    c.worker = 0;
    c.world_size = 1;
    try {
      client_ = std::make_unique<PsClient>(c);
    } catch (...) {
      thread_.join();  // Run gives up on the absent worker after the rendezvous timeout
      throw;
    }
    gradients_.assign(static_cast<size_t>(client_->num_parameters()), 1e-4f);
  }

  // Without Stop, closing the connection loses the worker, which also ends Run.
  ~LoopbackJob() {
    client_.reset();
    if (thread_.joinable()) thread_.join();
  }

  PsClient& client() { return *client_; }
  const float* gradients() const { return gradients_.data(); }
  // Bytes of one pull's or one push's float32 payload.
  int64_t payload_bytes() const { return client_->num_parameters() * 4; }

  // Ends the job; returns the server's report. Rethrows what Run threw.
  ParameterServerReport Stop() {
    client_->Finish("{}");
    thread_.join();
    if (error_) std::rethrow_exception(error_);
    return report_;
  }

 private:
  std::unique_ptr<ParameterServer> server_;
  std::thread thread_;
  std::exception_ptr error_;
  ParameterServerReport report_;
  std::unique_ptr<PsClient> client_;
  std::vector<float> gradients_;
};

// Sets the MB (per second) counter and checks that the server applied every push.
void Report(benchmark::State& state, LoopbackJob& job, int64_t payloads_per_iteration,
            int64_t pushes) {
  const ParameterServerReport report = job.Stop();
  const double bytes = static_cast<double>(state.iterations()) *
                       static_cast<double>(payloads_per_iteration * job.payload_bytes());
  state.counters["MB"] = benchmark::Counter(bytes / 1e6, benchmark::Counter::kIsRate);
  state.counters["params"] = static_cast<double>(job.payload_bytes() / 4);
  if (report.updates != pushes) {
    state.SkipWithError(("the server applied " + std::to_string(report.updates) + " of " +
                         std::to_string(pushes) + " pushes").c_str());
  }
}

// What a worker does every step: pull the weights, push a gradient computed on them.
void BM_PullPush(benchmark::State& state) {
  LoopbackJob job;
  int64_t pushes = 0;
  for (auto _ : state) {
    const uint64_t version = job.client().Pull(false).version();
    const ps::PushAck& ack = job.client().Push(version, 64, job.gradients(), 0.5, false);
    benchmark::DoNotOptimize(ack.version());
    ++pushes;
  }
  Report(state, job, 2, pushes);
}
BENCHMARK(BM_PullPush)->Unit(benchmark::kMicrosecond)->UseRealTime();

// The same exchange as one round trip: the push asks for the weights after it, as a worker
// without --lock does.
void BM_PushWithPull(benchmark::State& state) {
  LoopbackJob job;
  uint64_t version = job.client().Pull(false).version();
  int64_t pushes = 0;
  for (auto _ : state) {
    const ps::PushAck& ack = job.client().Push(version, 64, job.gradients(), 0.5, false, true);
    version = job.client().weights().version();
    benchmark::DoNotOptimize(ack.version());
    ++pushes;
  }
  Report(state, job, 2, pushes);
}
BENCHMARK(BM_PushWithPull)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_Pull(benchmark::State& state) {
  LoopbackJob job;
  for (auto _ : state) {
    benchmark::DoNotOptimize(job.client().Pull(false).version());
  }
  Report(state, job, 1, 0);
}
BENCHMARK(BM_Pull)->Unit(benchmark::kMicrosecond)->UseRealTime();

// A push and the server's SGD step over the 269,322 parameters.
void BM_Push(benchmark::State& state) {
  LoopbackJob job;
  uint64_t version = job.client().welcome().version();
  int64_t pushes = 0;
  for (auto _ : state) {
    version = job.client().Push(version, 64, job.gradients(), 0.5, false).version();
    ++pushes;
  }
  Report(state, job, 1, pushes);
}
BENCHMARK(BM_Push)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace
}  // namespace sparktorch
