#include "core/train/gradient_buckets.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <chrono>
#include <thread>
#include <vector>

#include "tests/core/sync_in_threads.h"

namespace sparktorch {
namespace {

// Waits up to 10 s for `done`; false if it never is.
template <typename Done>
bool Eventually(Done done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// Three parameters of 3, 2 and 4 values, then the rows; buckets of at least 4 values: bucket 0
// is the last parameter (and the rows), bucket 1 the first two.
TEST(GradientBuckets, ABucketIsSummedAsSoonAsItsParametersAreReady) {
  ThreadWorld world(2);
  world.Run([](int rank, Communicator& comm) {
    torch::Tensor grads = torch::zeros({10});
    GradientBuckets buckets(comm, grads, {3, 2, 4}, at::kFloat, 4);
    ASSERT_EQ(buckets.buckets(), 2u);
    for (int step = 1; step <= 2; ++step) {
      grads.fill_(static_cast<float>(rank + step));  // every rank's values, the rows included
      buckets.Begin();
      buckets.Ready(2);
      // Bucket 0 (values 5..9) is summed while the first two parameters are not ready yet.
      const float sum = static_cast<float>(2 * step + 1);
      EXPECT_TRUE(Eventually([&] { return grads[9].item<float>() == sum; })) << "step " << step;
      EXPECT_EQ(grads[0].item<float>(), static_cast<float>(rank + step)) << "bucket 1 waits";
      buckets.Ready(0);
      buckets.Ready(1);
      buckets.Finish();
      EXPECT_TRUE(torch::equal(grads, torch::full({10}, sum))) << "step " << step;
    }
  });
}

// In 16 bits the rows go in float32 after the last bucket, exactly.
TEST(GradientBuckets, In16BitsTheRowsAreSummedExactly) {
  ThreadWorld world(2);
  world.Run([](int rank, Communicator& comm) {
    torch::Tensor grads = torch::zeros({6});
    GradientBuckets buckets(comm, grads, {2, 3}, at::kBFloat16, 1);
    EXPECT_EQ(buckets.buckets(), 2u);
    grads.narrow(0, 0, 5).fill_(1.0f / 3);
    grads[5] = 257.0f + rank;  // 257 + 258 = 515: not a bfloat16
    buckets.Begin();
    buckets.Ready(1);
    buckets.Ready(0);
    buckets.Finish();
    EXPECT_EQ(grads[5].item<float>(), 515.0f);
    const float third = static_cast<float>(c10::BFloat16(1.0f / 3));
    EXPECT_EQ(grads[0].item<float>(), static_cast<float>(c10::BFloat16(third + third)));
  });
}

// A failing collective fails Finish with its error, on every later step too.
class FailingWorld : public LocalCommunicator {
 public:
  int world_size() const override { return 2; }
  void AllreduceSum(float*, size_t) override { throw std::runtime_error("peer lost"); }
};

TEST(GradientBuckets, AFailedCollectiveFailsTheStep) {
  FailingWorld comm;
  torch::Tensor grads = torch::zeros({4});
  GradientBuckets buckets(comm, grads, {3}, at::kFloat, 1);
  buckets.Begin();
  buckets.Ready(0);
  EXPECT_THROW(buckets.Finish(), std::runtime_error);
}

}  // namespace
}  // namespace sparktorch
