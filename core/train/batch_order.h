#ifndef SPARKTORCH_CORE_TRAIN_BATCH_ORDER_H_
#define SPARKTORCH_CORE_TRAIN_BATCH_ORDER_H_

#include <cstdint>

#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>

namespace sparktorch {

// Which of a rank's rows each training step takes. By default an epoch is one pass over the
// rows in a shuffled order, `batch` rows a step (the last step takes what is left). With
// `steps_per_epoch` above 0 an epoch is that many steps of `batch` rows each (all the rows when
// there are fewer), drawn on from one shuffled pass after another across epochs: a pass with
// fewer rows left than a batch is dropped and a new one drawn (Keras's steps_per_epoch,
// SparkTorch's `iters` with a miniBatch). Without shuffling the passes keep the rows' order.
class BatchOrder {
 public:
  // `batch` <= 0: the whole partition a step. `seed` seeds the shuffles.
  BatchOrder(int64_t rows, int64_t batch, int64_t steps_per_epoch, bool shuffle, uint64_t seed);

  // This rank's steps in an epoch (ranks agree on the largest; a rank short of rows takes
  // empty steps).
  int64_t LocalSteps() const;
  // The draws of `epochs` epochs a run before this one trained, so a resumed run goes on with
  // the rows the run it continues would have taken.
  void Skip(int epochs, int64_t steps);
  // Before each epoch; `new_round`: the first epoch of a round of partition shuffles, which
  // starts from a fresh order even without shuffling.
  void StartEpoch(bool new_round);
  // The positions (int64, into 0..rows) of step `step` of this epoch; an empty tensor when this
  // rank has no rows for it.
  at::Tensor Step(int64_t step);

 private:
  at::Tensor Pass() const;  // a new order of all the rows
  at::Tensor NextBatch();   // steps_per_epoch: the next batch from the passes

  int64_t rows_;
  int64_t batch_;  // rows a step, at most rows_
  int64_t steps_per_epoch_;
  bool shuffle_;
  mutable at::Generator generator_;
  at::Tensor order_;
  int64_t cursor_ = 0;  // steps_per_epoch: the next row of order_
};

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_TRAIN_BATCH_ORDER_H_
