#include "core/train/early_stopping.h"

#include <limits>

namespace sparktorch {

EarlyStopping::EarlyStopping(int patience, First first)
    : patience_(patience), first_(first), best_(std::numeric_limits<double>::infinity()) {}

bool EarlyStopping::Observe(double train_loss, const std::optional<double>& validation_loss) {
  if (patience_ <= 0) return false;
  const double watched = validation_loss ? *validation_loss : train_loss;
  const bool first_is_best = !observed_ && first_ == First::kIsBest;
  observed_ = true;
  last_was_best_ = first_is_best || watched < best_;
  if (last_was_best_) {
    best_ = watched;
    since_best_ = 0;
    return false;
  }
  return ++since_best_ >= patience_;
}

}  // namespace sparktorch
