// The MPI backend. The only file that includes mpi.h; without SPARKTORCH_WITH_MPI it compiles
// to functions that say MPI is missing.
#include "core/world/mpi_communicator.h"

#include <algorithm>
#include <string>
#include <vector>

#include "core/net/errors.h"
#include "formats/error.h"

#ifdef SPARKTORCH_WITH_MPI
// The C API only: the deprecated C++ bindings would need libmpi_cxx.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

namespace sparktorch {

#ifdef SPARKTORCH_WITH_MPI
namespace {

void Check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  throw PeerError(std::string(what) + " failed: " + std::string(text, length), false);
}

// Large buffers go in pieces: MPI counts are ints.
constexpr size_t kMaxCount = size_t{1} << 30;
constexpr int kHandshakeTag = 7701;

class MpiCommunicator : public Communicator {
 public:
  explicit MpiCommunicator(int thread_level) : threads_allowed_(thread_level >= MPI_THREAD_SERIALIZED) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  int rank() const override { return rank_; }
  int world_size() const override { return size_; }
  bool threads_allowed() const override { return threads_allowed_; }

  void AllreduceSum(float* data, size_t count) override { Allreduce(data, count, MPI_FLOAT, MPI_SUM); }
  void AllreduceSum(double* data, size_t count) override { Allreduce(data, count, MPI_DOUBLE, MPI_SUM); }
  void AllreduceMax(double* data, size_t count) override { Allreduce(data, count, MPI_DOUBLE, MPI_MAX); }

  void Broadcast(void* data, size_t bytes, int root) override {
    char* p = static_cast<char*>(data);
    for (size_t done = 0; done < bytes; done += kMaxCount) {
      int n = static_cast<int>(std::min(kMaxCount, bytes - done));
      Check(MPI_Bcast(p + done, n, MPI_BYTE, root, MPI_COMM_WORLD), "MPI_Bcast");
    }
  }

  void Alltoall(const void* send, void* recv, size_t bytes) override {
    Check(MPI_Alltoall(send, Count(bytes), MPI_BYTE, recv, Count(bytes), MPI_BYTE, MPI_COMM_WORLD),
          "MPI_Alltoall");
  }

  void Allgather(const void* send, void* recv, size_t bytes) override {
    // MPI forbids a send buffer inside the receive buffer, unless it says so.
    const bool in_place = send == static_cast<const char*>(recv) + rank_ * bytes;
    Check(MPI_Allgather(in_place ? MPI_IN_PLACE : send, Count(bytes), MPI_BYTE, recv, Count(bytes),
                        MPI_BYTE, MPI_COMM_WORLD),
          "MPI_Allgather");
  }

  void Barrier() override { Check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier"); }

  void Handshake() override {
    std::vector<int> in(size_), out(size_, rank_);
    std::vector<MPI_Request> requests;
    for (int peer = 0; peer < size_; ++peer) {
      if (peer == rank_) continue;
      requests.emplace_back();
      Check(MPI_Irecv(&in[peer], 1, MPI_INT, peer, kHandshakeTag, MPI_COMM_WORLD, &requests.back()),
            "MPI_Irecv");
      requests.emplace_back();
      Check(MPI_Isend(&out[peer], 1, MPI_INT, peer, kHandshakeTag, MPI_COMM_WORLD, &requests.back()),
            "MPI_Isend");
    }
    Check(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  }

 private:
  // A block of an all-to-all or an all-gather: MPI counts are ints.
  static int Count(size_t bytes) {
    if (bytes > kMaxCount) {
      throw UsageError("a 16-bit all-reduce sends at most 1 GiB a rank and block; this model's "
                       "blocks are " + std::to_string(bytes) + " bytes: use --allreduce-dtype fp32");
    }
    return static_cast<int>(bytes);
  }

  template <typename T>
  void Allreduce(T* data, size_t count, MPI_Datatype type, MPI_Op op) {
    for (size_t done = 0; done < count; done += kMaxCount) {
      int n = static_cast<int>(std::min(kMaxCount, count - done));
      Check(MPI_Allreduce(MPI_IN_PLACE, data + done, n, type, op, MPI_COMM_WORLD), "MPI_Allreduce");
    }
  }

  bool threads_allowed_;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace

bool MpiBuilt() { return true; }

std::unique_ptr<Communicator> InitMpi() {
  int provided = 0;
  // Serialized: the trainer's bucket thread makes collectives while the main thread waits.
  Check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided), "MPI_Init");
  // Errors come back as return codes and become exceptions, instead of MPI aborting the process
  // with its own message.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  return std::make_unique<MpiCommunicator>(provided);
}

void FinalizeMpi() { MPI_Finalize(); }

#else  // !SPARKTORCH_WITH_MPI

bool MpiBuilt() { return false; }

std::unique_ptr<Communicator> InitMpi() {
  throw UsageError(
      "this sparktorch was built without MPI (SPARKTORCH_WITH_MPI=OFF): synchronous training "
      "across processes is not available");
}

void FinalizeMpi() {}

#endif

}  // namespace sparktorch
