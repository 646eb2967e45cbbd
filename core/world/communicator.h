#ifndef SPARKTORCH_CORE_WORLD_COMMUNICATOR_H_
#define SPARKTORCH_CORE_WORLD_COMMUNICATOR_H_

#include <cstddef>
#include <cstring>

namespace sparktorch {

// The collectives synchronous training needs, over a fixed world of ranks. Every rank must make
// the same calls in the same order (that is what the trainer's agreement on steps per epoch is
// for). Implementations throw on a lost peer instead of waiting forever. Not thread-safe: one
// thread of each rank calls.
class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  // Whether a thread other than the one that made this may make the collectives, one thread at
  // a time (MPI_THREAD_SERIALIZED).
  virtual bool threads_allowed() const { return true; }

  // Sums `count` values across all ranks, in place; every rank ends with the sum.
  virtual void AllreduceSum(float* data, size_t count) = 0;
  virtual void AllreduceSum(double* data, size_t count) = 0;
  // Replaces each value with its maximum across all ranks.
  virtual void AllreduceMax(double* data, size_t count) = 0;
  // Replaces `bytes` bytes at `data` on every rank with root's.
  virtual void Broadcast(void* data, size_t bytes, int root) = 0;
  // Block b of `send` (world_size() blocks of `bytes` bytes) goes to rank b, where it is block
  // rank() of its `recv`.
  virtual void Alltoall(const void* send, void* recv, size_t bytes) = 0;
  // Every rank's `bytes` bytes at `send` into every rank's `recv`, in rank order.
  virtual void Allgather(const void* send, void* recv, size_t bytes) = 0;
  virtual void Barrier() = 0;
  // Exchanges a message between every pair of ranks, so that every connection a collective may
  // need is made before training: Open MPI connects lazily, and a pair that cannot connect would
  // otherwise wait in the middle of the first epoch.
  virtual void Handshake() {}
};

// A world of one: single-process training and tests. Every collective is the identity.
class LocalCommunicator : public Communicator {
 public:
  int rank() const override { return 0; }
  int world_size() const override { return 1; }
  void AllreduceSum(float*, size_t) override {}
  void AllreduceSum(double*, size_t) override {}
  void AllreduceMax(double*, size_t) override {}
  void Broadcast(void*, size_t, int) override {}
  void Alltoall(const void* send, void* recv, size_t bytes) override {
    if (send != recv) std::memcpy(recv, send, bytes);
  }
  void Allgather(const void* send, void* recv, size_t bytes) override {
    if (send != recv) std::memcpy(recv, send, bytes);
  }
  void Barrier() override {}
};

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_WORLD_COMMUNICATOR_H_
