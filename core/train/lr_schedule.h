#ifndef SPARKTORCH_CORE_TRAIN_LR_SCHEDULE_H_
#define SPARKTORCH_CORE_TRAIN_LR_SCHEDULE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace sparktorch {

// Completes a learning-rate schedule spec ("cosine" or {"type": "cosine", ...}; "none" or null:
// none) with every option spelled out, after checking every field. Names and semantics are
// torch.optim.lr_scheduler's:
//   step               StepLR(step_size, gamma=0.1)
//   multistep          MultiStepLR(milestones, gamma=0.1)
//   exponential        ExponentialLR(gamma)
//   cosine             CosineAnnealingLR(T_max=the epochs after warm-up, eta_min=0)
//   one_cycle          OneCycleLR(max_lr=the optimizer's lr, pct_start=0.3, anneal_strategy="cos",
//                      div_factor=25, final_div_factor=1e4, three_phase=false,
//                      cycle_momentum=true, base_momentum=0.85, max_momentum=0.95), per step
//   reduce_on_plateau  ReduceLROnPlateau(mode="min", factor=0.1, patience=10, threshold=1e-4,
//                      threshold_mode="rel", cooldown=0, min_lr=0, eps=1e-8) on the validation
//                      loss (the training loss without validation rows)
// Every epoch-based type takes `warmup_epochs` (default 0) and `warmup_start_factor` (default
// 1/3): SequentialLR([LinearLR(warmup_start_factor, total_iters=warmup_epochs), main],
// milestones=[warmup_epochs]), so the main schedule counts its epochs from the warm-up's end.
// Throws SpecError naming the field at fault. Returns null for no schedule.
nlohmann::json CompleteLrScheduleSpec(const nlohmann::json& spec);

// The learning rate (and, for one_cycle, the momentum) at every step of a training run, from a
// spec as CompleteLrScheduleSpec returns it. Epoch schedules change the rate between epochs
// (as scheduler.step() after each epoch would); one_cycle between steps. Not thread-safe.
class LrSchedule {
 public:
  // `base_lr`: the optimizer's lr. `epochs`: planned in all. `steps_per_epoch`: the steps of
  // every epoch (one_cycle's total_steps is epochs * steps_per_epoch).
  LrSchedule(const nlohmann::json& spec, double base_lr, int epochs, int64_t steps_per_epoch);

  // The rate for step `step` (0-based) of epoch `epoch` (1-based).
  double Lr(int epoch, int64_t step) const;
  // one_cycle with cycle_momentum: the momentum (SGD's, RMSprop's) or Adam's beta1 for that step.
  std::optional<double> Momentum(int epoch, int64_t step) const;

  // reduce_on_plateau: records the loss that ended an epoch; returns true when it lowered the
  // rate for the epochs that follow. Other types: false.
  bool EndEpoch(double loss);

  // What resuming needs beyond the position (reduce_on_plateau's best loss, bad epochs, cooldown
  // and rate); Restore takes what State gave.
  nlohmann::json State() const;
  void Restore(const nlohmann::json& state);

  const std::string& type() const { return type_; }

 private:
  double Main(int index) const;  // the main schedule at its 0-based epoch `index`
  std::vector<double> PhaseEnds() const;                // one_cycle's, in steps
  double CycleStep(int epoch, int64_t step) const;      // one_cycle's step count

  nlohmann::json spec_;
  std::string type_;
  double base_lr_;
  int epochs_;
  int64_t steps_per_epoch_;
  int warmup_ = 0;
  // reduce_on_plateau's state, as torch's.
  double plateau_lr_;
  double best_;
  int bad_epochs_ = 0;
  int cooldown_left_ = 0;
};

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_TRAIN_LR_SCHEDULE_H_
