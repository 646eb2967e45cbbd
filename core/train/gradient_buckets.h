#ifndef SPARKTORCH_CORE_TRAIN_GRADIENT_BUCKETS_H_
#define SPARKTORCH_CORE_TRAIN_GRADIENT_BUCKETS_H_

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <c10/core/ScalarType.h>
#include <torch/types.h>

#include "core/train/allreduce16.h"
#include "core/world/communicator.h"

namespace sparktorch {

// A synchronous step's gradient sum in buckets that start while the backward pass still runs
// (train --allreduce-overlap), as PyTorch DDP's reducer does. The flat gradient buffer is cut,
// from its end, into buckets of about `bucket_elements` whole parameters: bucket 0 holds the
// last parameters, whose gradients backward computes first. A communication thread sums the
// buckets in that order, each once all of its parameters are Ready, so every rank makes the same
// collectives in the same order. Each value's sum is the one the whole buffer's all-reduce gives
// (the same bits wherever the collective adds in the same order, as with 2 ranks).
//
// One step: Begin, then Ready for each parameter as its gradient lands in the buffer (from an
// autograd hook, on the thread that runs backward), then Finish after the backward pass. Ready
// and Finish are called from one thread; the collectives from the communication thread only,
// never at the same time as the caller's, so the communicator must allow calls from another
// thread (MPI_THREAD_SERIALIZED).
class GradientBuckets {
 public:
  // `grads` is the flat buffer (float32, contiguous, on the CPU) of the parameters' gradients,
  // `sizes[i]` elements for parameter i in order, then one element: the step's rows, which is
  // summed exactly (with bucket 0 in float32, after the last bucket otherwise). `wire` is
  // at::kFloat, or the 16-bit type of Allreduce16. `comm` must outlive this.
  GradientBuckets(Communicator& comm, torch::Tensor grads, const std::vector<int64_t>& sizes,
                  c10::ScalarType wire, int64_t bucket_elements);
  // Stops the thread; one still inside a collective (a failed step) is left to the process's end.
  ~GradientBuckets();
  GradientBuckets(const GradientBuckets&) = delete;
  GradientBuckets& operator=(const GradientBuckets&) = delete;

  // A step begins: no parameter is ready. The previous step must be Finished.
  void Begin();
  // Parameter i's gradient (or its zeros) is in the buffer; its bucket starts once every one of
  // its parameters is. Once a step.
  void Ready(size_t i);
  // Whether parameter i is Ready this step.
  bool ready(size_t i) const { return ready_[i]; }
  // Waits until every bucket and the rows are summed; rethrows the thread's failure. Every
  // parameter must be Ready.
  void Finish();

  size_t buckets() const { return shared_->buckets.size(); }

 private:
  struct Bucket {
    int64_t begin = 0, end = 0;  // elements of the buffer
    size_t parameters = 0;       // parameters in it
    size_t waiting = 0;          // of them, not Ready this step
    std::unique_ptr<Allreduce16> sum16;
  };
  // What the communication thread shares with the caller's, owned by both: a thread left
  // inside a collective when the object goes (a failed step) touches only this after it.
  struct Shared {
    Communicator* comm = nullptr;
    torch::Tensor grads;
    c10::ScalarType wire = at::kFloat;
    int64_t rows_at = 0;  // the rows element's index
    std::vector<Bucket> buckets;
    std::mutex mu;
    std::condition_variable cv;
    bool step = false;       // between Begin and the thread's end of the step
    size_t next = 0;         // the next bucket the thread sums this step
    bool in_collective = false;
    bool stop = false;
    std::exception_ptr error;
  };
  static void Run(const std::shared_ptr<Shared>& shared);

  std::shared_ptr<Shared> shared_;
  std::vector<size_t> bucket_of_;  // parameter -> bucket
  std::vector<bool> ready_;        // the caller's thread's only
  std::thread thread_;
};

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_TRAIN_GRADIENT_BUCKETS_H_
