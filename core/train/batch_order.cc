#include "core/train/batch_order.h"

#include <algorithm>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Functions.h>

namespace sparktorch {

BatchOrder::BatchOrder(int64_t rows, int64_t batch, int64_t steps_per_epoch, bool shuffle,
                       uint64_t seed)
    : rows_(rows),
      batch_(batch <= 0 ? std::max<int64_t>(rows, 1) : batch),
      steps_per_epoch_(steps_per_epoch),
      shuffle_(shuffle),
      generator_(at::detail::createCPUGenerator(seed)),
      order_(at::arange(rows, at::kLong)),
      cursor_(rows) {}

int64_t BatchOrder::LocalSteps() const {
  if (steps_per_epoch_ > 0) return steps_per_epoch_;
  if (rows_ == 0) return 0;
  return (rows_ + batch_ - 1) / batch_;
}

at::Tensor BatchOrder::Pass() const {
  return shuffle_ ? at::randperm(rows_, generator_, at::kLong) : at::arange(rows_, at::kLong);
}

void BatchOrder::Skip(int epochs, int64_t steps) {
  if (steps_per_epoch_ > 0) {
    for (int64_t i = 0; i < epochs * steps; ++i) NextBatch();
  } else if (shuffle_) {
    for (int epoch = 0; epoch < epochs; ++epoch) Pass();
  }
}

void BatchOrder::StartEpoch(bool new_round) {
  if (steps_per_epoch_ == 0 && (shuffle_ || new_round)) {
    order_ = at::randperm(rows_, generator_, at::kLong);
  }
}

at::Tensor BatchOrder::NextBatch() {
  const int64_t n = std::min(batch_, rows_);
  if (n == 0) return at::empty({0}, at::kLong);
  if (cursor_ + n > rows_) {
    order_ = Pass();
    cursor_ = 0;
  }
  at::Tensor positions = order_.narrow(0, cursor_, n);
  cursor_ += n;
  return positions;
}

at::Tensor BatchOrder::Step(int64_t step) {
  if (steps_per_epoch_ > 0) return NextBatch();
  const int64_t begin = step * batch_;
  const int64_t n = std::max<int64_t>(0, std::min(batch_, rows_ - begin));
  return n > 0 ? order_.narrow(0, begin, n) : at::empty({0}, at::kLong);
}

}  // namespace sparktorch
