#ifndef SPARKTORCH_CORE_TRAIN_EARLY_STOPPING_H_
#define SPARKTORCH_CORE_TRAIN_EARLY_STOPPING_H_

#include <optional>

namespace sparktorch {

// Early stopping, for the trainer and the hogwild parameter server alike: training stops once
// `patience` epochs in a row brought no improvement. The loss watched is the validation loss when
// the epoch has one, else the training loss; an epoch improves only with a loss strictly below
// the best one before it. Not thread-safe.
class EarlyStopping {
 public:
  // How the first epoch's loss counts. The two differ only for a NaN or infinite first loss.
  enum class First {
    // Like any other: it improves only when it is below infinity, so a NaN or infinite first
    // loss counts as an epoch without improvement (the trainer's rule).
    kMustImprove,
    // It becomes the best whatever it is, a NaN included (the parameter server's rule; a NaN
    // best is never improved on).
    kIsBest,
  };

  // `patience` 0 (or less): never stops.
  EarlyStopping(int patience, First first);

  // Records an epoch; returns true when training should stop after it (never with patience 0).
  bool Observe(double train_loss, const std::optional<double>& validation_loss);
  // Whether the epoch Observe saw last is the best so far (false with patience 0).
  bool last_was_best() const { return last_was_best_; }

 private:
  int patience_;
  First first_;
  bool observed_ = false;
  double best_;
  int since_best_ = 0;
  bool last_was_best_ = false;
};

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_TRAIN_EARLY_STOPPING_H_
