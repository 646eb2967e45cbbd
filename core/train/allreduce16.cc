#include "core/train/allreduce16.h"

#include <ATen/ATen.h>

namespace sparktorch {

Allreduce16::Allreduce16(Communicator& comm, c10::ScalarType wire) : comm_(comm), wire_(wire) {
  TORCH_CHECK(wire == at::kBFloat16 || wire == at::kHalf, "Allreduce16: a 16-bit wire type");
}

void Allreduce16::Sum(torch::Tensor values) {
  TORCH_CHECK(values.scalar_type() == at::kFloat && values.is_contiguous() && values.is_cpu(),
              "Allreduce16: contiguous float32 values on the CPU");
  const int64_t ranks = comm_.world_size();
  const int64_t count = values.numel();
  const int64_t block = (count + ranks - 1) / ranks;  // the last block padded with zeros
  if (send_.numel() != ranks * block) {
    send_ = torch::zeros({ranks * block}, torch::TensorOptions().dtype(wire_));
    received_ = torch::empty({ranks, block}, torch::TensorOptions().dtype(wire_));
    sum_ = torch::empty({block}, torch::TensorOptions().dtype(torch::kFloat));
    gathered_ = torch::empty({ranks * block}, torch::TensorOptions().dtype(wire_));
  }
  send_.narrow(0, 0, count).copy_(values);  // rounds to the wire type
  const size_t bytes = static_cast<size_t>(block) * send_.element_size();
  comm_.Alltoall(send_.data_ptr(), received_.data_ptr(), bytes);
  // This rank's block: the ranks' values added in rank order, the same order on every rank.
  sum_.copy_(received_[0]);
  for (int64_t r = 1; r < ranks; ++r) sum_.add_(received_[r]);
  torch::Tensor mine = gathered_.narrow(0, comm_.rank() * block, block);
  mine.copy_(sum_);  // rounds the sum
  comm_.Allgather(mine.data_ptr(), gathered_.data_ptr(), bytes);
  values.copy_(gathered_.narrow(0, 0, count));
}

}  // namespace sparktorch
