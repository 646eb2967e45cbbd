// The GPU kit's check of synchronous training on a GPU (check (e) of build_and_check.sh): two
// ranks as threads of one process (tests/core/sync_in_threads.h) train the Fashion-MNIST MLP on
// DEVICE and must end with the weights of one process that trains on their joint batches on the
// same device. That is the trainer's path for several ranks on CUDA tensors: rank 0's weights
// broadcast through a host copy, each gradient moved into the flat buffer weighted by the step's
// rows, the all-reduce staged through the host and copied back. The GPU machine has no MPI, so
// sparktorch's own sync mode cannot run there; this is the same Trainer with another Communicator.
//
// Usage: gpu_sync_check DEVICE   (cuda, cuda:N; cpu checks the program itself, as ctest does)
// Prints one PASS or FAIL line a comparison. Exit status: 0 all passed, 3 one failed, 2 usage or
// an error before any comparison.

#include <cstdio>
#include <exception>
#include <string>

#include <torch/torch.h>

#include "core/device.h"
#include "tests/core/sync_in_threads.h"

namespace sparktorch {
namespace {

// The 784-256-256-10 MLP of examples/fashion_mnist_mlp.json.
const char* kMlp = R"({"layers": [
  {"type": "linear", "in_features": 784, "out_features": 256}, {"type": "relu"},
  {"type": "linear", "in_features": 256, "out_features": 256}, {"type": "relu"},
  {"type": "linear", "in_features": 256, "out_features": 10}]})";

// Random rows (seeded): rank 0 has 224 rows, rank 1 200, 7 steps of 32 each (rank 1's last: 8).
SyncCase MlpCase(const char* optimizer) {
  torch::Generator gen = at::detail::createCPUGenerator(11);
  SyncCase c;
  c.spec = kMlp;
  c.optimizer = nlohmann::json::parse(optimizer);
  c.batch = 32;
  c.epochs = 2;
  const int64_t rows[2] = {224, 200};
  for (int r = 0; r < 2; ++r) {
    c.rank_rows[r].inputs = torch::rand({rows[r], 784}, gen);
    c.rank_rows[r].targets = torch::randint(0, 10, {rows[r]}, gen, torch::kLong);
  }
  return c;
}

bool Compare(const char* name, const char* optimizer, c10::Device device, double tolerance) {
  const SyncComparison got = TwoRanksAgainstOneProcess(MlpCase(optimizer), device);
  const bool ok = got.ranks_agree && got.max_difference < tolerance && got.rows[0] == 424 &&
                  got.rows[1] == 424;
  std::printf("%s: two ranks on %s, %s: ranks agree: %s, largest weight difference from one "
              "process %.3g (below %.0e), loss difference %.3g, rows an epoch %lld and %lld (424)\n",
              ok ? "PASS" : "FAIL", device.str().c_str(), name, got.ranks_agree ? "yes" : "NO",
              got.max_difference, tolerance, got.loss_difference,
              static_cast<long long>(got.rows[0]), static_cast<long long>(got.rows[1]));
  return ok;
}

int Main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: gpu_sync_check DEVICE (cuda, cuda:N or cpu)\n");
    return 2;
  }
  try {
    // As sparktorch train does: cuda becomes cuda:0, and a device that is not there is refused.
    const c10::Device device = ResolveDevice(argv[1]);
    at::set_num_threads(1);
    bool ok = Compare("sgd", R"({"type": "sgd", "lr": 0.1})", device, 1e-5);
    ok = Compare("adam", R"({"type": "adam", "lr": 0.001})", device, 1e-3) && ok;
    return ok ? 0 : 3;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpu_sync_check: %s\n", e.what());
    return 2;
  }
}

}  // namespace
}  // namespace sparktorch

int main(int argc, char** argv) { return sparktorch::Main(argc, argv); }
