#include "core/train/allreduce16.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "tests/core/sync_in_threads.h"

namespace sparktorch {
namespace {

// One rank's values: normal, with a spread of magnitudes, some exactly zero.
torch::Tensor RankValues(int rank, int64_t count) {
  torch::manual_seed(100 + rank);
  torch::Tensor v = torch::randn({count}) * torch::pow(10.0, torch::randint(-3, 3, {count}));
  v.index_put_({torch::arange(0, count, 17)}, 0.0f);
  return v;
}

template <typename Wire>
float Rounded(float v) {
  return static_cast<float>(Wire(v));
}

// The sum Allreduce16 defines, value by value, with c10's scalar conversions: each rank's value
// rounded, the rounded values added in float32 in rank order, the sum rounded.
template <typename Wire>
std::vector<float> Expected(const std::vector<torch::Tensor>& ranks) {
  const int64_t count = ranks[0].numel();
  std::vector<float> out(count);
  for (int64_t i = 0; i < count; ++i) {
    float sum = Rounded<Wire>(ranks[0][i].item<float>());
    for (size_t r = 1; r < ranks.size(); ++r) sum += Rounded<Wire>(ranks[r][i].item<float>());
    out[i] = Rounded<Wire>(sum);
  }
  return out;
}

// Runs Allreduce16 on `size` ranks (threads) over their RankValues; returns each rank's result.
std::vector<torch::Tensor> SumOnRanks(int size, int64_t count, c10::ScalarType wire) {
  std::vector<torch::Tensor> values;
  for (int r = 0; r < size; ++r) values.push_back(RankValues(r, count));
  std::vector<torch::Tensor> results(size);
  ThreadWorld world(size);
  world.Run([&](int rank, Communicator& comm) {
    Allreduce16 sum(comm, wire);
    results[rank] = values[rank].clone();
    sum.Sum(results[rank]);
    // Again on the same buffers (kept between steps): the same answer.
    torch::Tensor again = values[rank].clone();
    sum.Sum(again);
    EXPECT_TRUE(torch::equal(again, results[rank])) << "rank " << rank;
  });
  return results;
}

template <typename Wire>
void ExpectTheDefinedSum(int size, c10::ScalarType wire, double unit_roundoff) {
  const int64_t count = 1001;  // not a multiple of the ranks: the last block is padded
  std::vector<torch::Tensor> values;
  for (int r = 0; r < size; ++r) values.push_back(RankValues(r, count));
  const std::vector<torch::Tensor> results = SumOnRanks(size, count, wire);
  const std::vector<float> expected = Expected<Wire>(values);
  for (int r = 0; r < size; ++r) {
    ASSERT_EQ(results[r].numel(), count);
    EXPECT_EQ(std::memcmp(results[r].data_ptr<float>(), results[0].data_ptr<float>(),
                          count * sizeof(float)),
              0)
        << "rank " << r << " against rank 0";
  }
  int64_t differ_from_float32 = 0;
  for (int64_t i = 0; i < count; ++i) {
    const float got = results[0][i].item<float>();
    ASSERT_EQ(got, expected[i]) << "value " << i;
    double exact = 0, magnitude = 0;
    for (const torch::Tensor& v : values) {
      exact += v[i].item<float>();
      magnitude += std::fabs(v[i].item<float>());
    }
    // Two roundings (the values', the sum's), each within the unit roundoff.
    EXPECT_LE(std::fabs(got - exact), 2.01 * unit_roundoff * magnitude + 1e-30) << "value " << i;
    float float32_sum = values[0][i].item<float>();
    for (int r = 1; r < size; ++r) float32_sum += values[r][i].item<float>();
    differ_from_float32 += got != float32_sum;
  }
  EXPECT_GT(differ_from_float32, count / 2) << "the sums are not rounded to 16 bits";
}

TEST(Allreduce16, Bf16GivesEveryRankTheFloat32SumOfTheRoundedValuesRounded) {
  ExpectTheDefinedSum<c10::BFloat16>(2, at::kBFloat16, std::ldexp(1.0, -8));
  ExpectTheDefinedSum<c10::BFloat16>(3, at::kBFloat16, std::ldexp(1.0, -8));
}

TEST(Allreduce16, Fp16GivesEveryRankTheFloat32SumOfTheRoundedValuesRounded) {
  ExpectTheDefinedSum<c10::Half>(2, at::kHalf, std::ldexp(1.0, -11));
  ExpectTheDefinedSum<c10::Half>(3, at::kHalf, std::ldexp(1.0, -11));
}

TEST(Allreduce16, OneRankRoundsItsValuesOnly) {
  LocalCommunicator alone;
  Allreduce16 sum(alone, at::kBFloat16);
  torch::Tensor v = torch::tensor({1.0f, 1.00390625f, 3.0e38f, -2.5e-3f});
  sum.Sum(v);
  // 1 + 2^-8 is a tie between 1 and 1 + 2^-7: to even, 1.
  EXPECT_EQ(v[0].item<float>(), 1.0f);
  EXPECT_EQ(v[1].item<float>(), 1.0f);
  EXPECT_EQ(v[2].item<float>(), Rounded<c10::BFloat16>(3.0e38f));
  EXPECT_EQ(v[3].item<float>(), Rounded<c10::BFloat16>(-2.5e-3f));
}

}  // namespace
}  // namespace sparktorch
