// Synchronous training with its ranks as threads of one process: a Communicator whose collectives
// meet in shared memory, and a comparison of two such ranks with one process that trains on their
// joint batches. It tests the trainer's path for several ranks (weights broadcast from rank 0,
// one flat gradient buffer, gradients weighted by each rank's rows) without MPI, in core_tests and
// on the GPU machine (tests/gpu/sync_check.cc), which has no MPI.
#ifndef SPARKTORCH_TESTS_CORE_SYNC_IN_THREADS_H_
#define SPARKTORCH_TESTS_CORE_SYNC_IN_THREADS_H_

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <torch/torch.h>

#include "core/world/communicator.h"
#include "core/model/spec_compiler.h"
#include "core/train/loss.h"
#include "core/train/optimizer.h"
#include "core/train/trainer.h"

namespace sparktorch {

// `size` ranks, one thread each. Every rank makes the same collectives in the same order, as
// Communicator requires; each waits at most `timeout` for the others, and once a rank has failed
// (Run saw it throw) every wait throws, so a failure never leaves the other threads waiting.
class ThreadWorld {
 public:
  explicit ThreadWorld(int size, std::chrono::seconds timeout = std::chrono::seconds(60))
      : size_(size), timeout_(timeout), slots_(size) {
    for (int r = 0; r < size; ++r) ranks_.emplace_back(this, r);
  }

  // Runs fn(rank, communicator) on `size` threads and joins them; rethrows the first failure.
  void Run(const std::function<void(int, Communicator&)>& fn) {
    std::vector<std::exception_ptr> errors(size_);
    std::vector<std::thread> threads;
    for (int r = 0; r < size_; ++r) {
      threads.emplace_back([&, r] {
        try {
          fn(r, ranks_[r]);
        } catch (...) {
          errors[r] = std::current_exception();
          Break();
        }
      });
    }
    for (std::thread& t : threads) t.join();
    for (const std::exception_ptr& e : errors) {
      if (e) std::rethrow_exception(e);
    }
  }

 private:
  class Rank : public Communicator {
   public:
    Rank(ThreadWorld* world, int rank) : world_(world), rank_(rank) {}
    int rank() const override { return rank_; }
    int world_size() const override { return world_->size_; }
    void AllreduceSum(float* data, size_t count) override {
      world_->Reduce(rank_, data, count, [](float a, float b) { return a + b; });
    }
    void AllreduceSum(double* data, size_t count) override {
      world_->Reduce(rank_, data, count, [](double a, double b) { return a + b; });
    }
    void AllreduceMax(double* data, size_t count) override {
      world_->Reduce(rank_, data, count, [](double a, double b) { return std::max(a, b); });
    }
    void Broadcast(void* data, size_t bytes, int root) override {
      world_->slots_[rank_] = data;
      world_->Wait();
      if (rank_ != root) std::memcpy(data, world_->slots_[root], bytes);
      world_->Wait();
    }
    void Alltoall(const void* send, void* recv, size_t bytes) override {
      world_->slots_[rank_] = const_cast<void*>(send);
      world_->Wait();
      for (int r = 0; r < world_->size_; ++r) {
        std::memcpy(static_cast<char*>(recv) + r * bytes,
                    static_cast<const char*>(world_->slots_[r]) + rank_ * bytes, bytes);
      }
      world_->Wait();
    }
    void Allgather(const void* send, void* recv, size_t bytes) override {
      world_->slots_[rank_] = const_cast<void*>(send);
      world_->Wait();
      for (int r = 0; r < world_->size_; ++r) {
        char* to = static_cast<char*>(recv) + r * bytes;
        if (to != world_->slots_[r]) std::memcpy(to, world_->slots_[r], bytes);
      }
      world_->Wait();
    }
    void Barrier() override { world_->Wait(); }

   private:
    ThreadWorld* world_;
    int rank_;
  };

  // Every rank computes the reduction in rank order, so every rank gets the same bits.
  template <typename T, typename Op>
  void Reduce(int rank, T* data, size_t count, Op op) {
    slots_[rank] = data;
    Wait();
    std::vector<T> result(static_cast<const T*>(slots_[0]), static_cast<const T*>(slots_[0]) + count);
    for (int r = 1; r < size_; ++r) {
      const T* other = static_cast<const T*>(slots_[r]);
      for (size_t i = 0; i < count; ++i) result[i] = op(result[i], other[i]);
    }
    Wait();  // every rank has read every buffer before any rank overwrites its own
    std::copy(result.begin(), result.end(), data);
  }

  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    if (broken_) throw std::runtime_error("ThreadWorld: another rank failed");
    const uint64_t generation = generation_;
    if (++arrived_ == size_) {
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
      return;
    }
    if (!cv_.wait_for(lock, timeout_, [&] { return generation_ != generation || broken_; })) {
      broken_ = true;
      cv_.notify_all();
      throw std::runtime_error("ThreadWorld: the other ranks did not reach the collective in time");
    }
    if (broken_) throw std::runtime_error("ThreadWorld: another rank failed");
  }

  void Break() {
    std::lock_guard<std::mutex> lock(mu_);
    broken_ = true;
    cv_.notify_all();
  }

  const int size_;
  const std::chrono::seconds timeout_;
  std::vector<Rank> ranks_;
  std::vector<void*> slots_;  // each rank's buffer in the collective under way
  std::mutex mu_;
  std::condition_variable cv_;
  int arrived_ = 0;
  uint64_t generation_ = 0;
  bool broken_ = false;
};

// Two ranks, each with its own rows, against one process whose every batch is the two ranks'
// batches of that step, rank 0's rows first: with the gradients averaged over the step's rows
// (weighted by each rank's rows), both train the same weights, up to float rounding.
struct SyncComparison {
  double max_difference = 0;    // the largest |a rank's weight - the one process's weight|
  bool ranks_agree = false;     // both ranks ended with the same weights, bit for bit
  int64_t rows[2] = {0, 0};     // each rank's last EpochStats.rows
  double loss_difference = 0;   // |a rank's last train_loss - the one process's|
  uint32_t checksum = 0;        // rank 0's WeightsChecksum
};

struct SyncCase {
  const char* spec;          // a model spec (core/model/spec_compiler.h)
  nlohmann::json optimizer;  // as CompleteOptimizerSpec takes it
  std::string loss = "cross_entropy";
  Examples rank_rows[2];     // both ranks must take the same number of steps an epoch
  int64_t batch = 8;         // rows per step on each rank
  int epochs = 2;
  c10::ScalarType allreduce = at::kFloat;  // the ranks' TrainOptions::allreduce_dtype
  int64_t overlap_bucket_elements = 0;     // the ranks' TrainOptions' (0: no overlap)
};

// Rank 0 starts from the weights of torch::manual_seed(1), rank 1 from other ones (seed 2), which
// the trainer's broadcast from rank 0 must replace; the one process starts from seed 1's.
inline SyncComparison TwoRanksAgainstOneProcess(const SyncCase& c, c10::Device device) {
  auto compile = [&](uint64_t seed) {
    torch::manual_seed(seed);
    CompiledSpec compiled = CompileSpec(nlohmann::json::parse(c.spec), {}, 0);
    compiled.module.to(device);
    return compiled.module;
  };
  auto params = [](const torch::jit::Module& m) {
    std::vector<torch::Tensor> out;
    for (const torch::Tensor& p : m.parameters()) out.push_back(p);
    return out;
  };
  TrainOptions options;
  options.epochs = c.epochs;
  options.shuffle = false;

  // The one process: step k's batch is rank 0's rows of step k, then rank 1's.
  std::vector<torch::Tensor> inputs, targets;
  const int64_t steps = (c.rank_rows[0].rows() + c.batch - 1) / c.batch;
  for (int64_t k = 0; k < steps; ++k) {
    for (const Examples& part : c.rank_rows) {
      const int64_t begin = std::min(k * c.batch, part.rows());
      const int64_t n = std::min(c.batch, part.rows() - begin);
      inputs.push_back(part.inputs.narrow(0, begin, n));
      targets.push_back(part.targets.narrow(0, begin, n));
    }
  }
  Examples joint{torch::cat(inputs), torch::cat(targets), c.rank_rows[0].class_index,
                  torch::Tensor()};
  torch::jit::Module one = compile(1);
  auto one_optimizer = MakeOptimizer(CompleteOptimizerSpec(c.optimizer), params(one));
  LocalCommunicator alone;
  options.batch_size = 2 * c.batch;
  Trainer one_trainer(one, Loss::FromSpec(c.loss), *one_optimizer, alone, device, options);
  const double one_loss = one_trainer.Fit(joint, Examples(), [](const EpochStats&) {})
                              .epochs.back().train_loss;

  torch::jit::Module modules[2] = {compile(1), compile(2)};
  uint32_t checksums[2] = {0, 0};
  double losses[2] = {0, 0};
  SyncComparison out;
  options.batch_size = c.batch;
  options.allreduce_dtype = c.allreduce;
  options.overlap_bucket_elements = c.overlap_bucket_elements;
  ThreadWorld world(2);
  world.Run([&](int rank, Communicator& comm) {
    auto optimizer = MakeOptimizer(CompleteOptimizerSpec(c.optimizer), params(modules[rank]));
    Trainer trainer(modules[rank], Loss::FromSpec(c.loss), *optimizer, comm, device, options);
    TrainResult result = trainer.Fit(c.rank_rows[rank], Examples(), [](const EpochStats&) {});
    checksums[rank] = trainer.WeightsChecksum();
    out.rows[rank] = result.epochs.back().rows;
    losses[rank] = result.epochs.back().train_loss;
  });
  out.ranks_agree = checksums[0] == checksums[1];
  out.checksum = checksums[0];
  out.loss_difference = std::max(std::abs(losses[0] - one_loss), std::abs(losses[1] - one_loss));
  std::vector<torch::Tensor> expected = params(one), got = params(modules[0]);
  for (size_t i = 0; i < expected.size(); ++i) {
    const double d = (got[i].detach().cpu() - expected[i].detach().cpu()).abs().max().item<double>();
    out.max_difference = std::max(out.max_difference, d);
  }
  return out;
}

}  // namespace sparktorch

#endif  // SPARKTORCH_TESTS_CORE_SYNC_IN_THREADS_H_
