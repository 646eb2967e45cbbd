#ifndef SPARKTORCH_CORE_TRAIN_ALLREDUCE16_H_
#define SPARKTORCH_CORE_TRAIN_ALLREDUCE16_H_

#include <c10/core/ScalarType.h>
#include <torch/types.h>

#include "core/world/communicator.h"

namespace sparktorch {

// A synchronous step's gradient sum in 16 bits (train --allreduce-dtype bf16 or fp16): half the
// bytes of a float32 all-reduce on the wire, the sum itself in float32.
//   1. each rank rounds its values to `wire` (to nearest, ties to even);
//   2. an all-to-all gives rank b block b (a 1/N share of the values) of every rank;
//   3. rank b adds the N blocks in float32, in rank order, and rounds the sum to `wire`;
//   4. an all-gather gives every rank every block, widened back to float32.
// Every rank ends with the same bits. A value is rounded twice (its own, then the sum), so the
// result is within about 2^-8 (bfloat16) or 2^-11 (float16) of the sum of the magnitudes,
// relatively, on top of float32's own rounding. float16 ends at 65504: a larger sum is inf, as
// with PyTorch DDP's fp16 compression hook; bfloat16 has float32's range.
class Allreduce16 {
 public:
  // `wire` is at::kBFloat16 or at::kHalf. `comm` must outlive this.
  Allreduce16(Communicator& comm, c10::ScalarType wire);

  // Sums `values` (float32, contiguous, on the CPU) over the ranks, in place.
  void Sum(torch::Tensor values);

 private:
  Communicator& comm_;
  c10::ScalarType wire_;
  // Kept from step to step: N blocks to send, N received, the sum, every rank's sum.
  torch::Tensor send_, received_, sum_, gathered_;
};

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_TRAIN_ALLREDUCE16_H_
