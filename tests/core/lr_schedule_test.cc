#include "core/train/lr_schedule.h"

#include <vector>

#include <gtest/gtest.h>

#include "formats/error.h"

namespace sparktorch {
namespace {

using nlohmann::json;

// The expected rates are what torch.optim.lr_scheduler 1.13 gives (Debian's python3-torch), read
// from optimizer.param_groups[0] before each step, with scheduler.step() after each epoch (per
// step for one_cycle).
std::vector<double> EpochRates(const json& spec, double lr, int epochs) {
  LrSchedule schedule(CompleteLrScheduleSpec(spec), lr, epochs, 1);
  std::vector<double> rates;
  for (int epoch = 1; epoch <= epochs; ++epoch) rates.push_back(schedule.Lr(epoch, 0));
  return rates;
}

void ExpectNear(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-9) << "at " << i;
}

TEST(LrSchedule, StepAsStepLR) {
  ExpectNear(EpochRates({{"type", "step"}, {"step_size", 3}, {"gamma", 0.5}}, 0.1, 8),
             {0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.025, 0.025});
}

TEST(LrSchedule, MultistepAsMultiStepLR) {
  ExpectNear(EpochRates({{"type", "multistep"}, {"milestones", {2, 5}}}, 0.1, 8),
             {0.1, 0.1, 0.01, 0.01, 0.01, 0.001, 0.001, 0.001});
}

TEST(LrSchedule, ExponentialAsExponentialLR) {
  ExpectNear(EpochRates({{"type", "exponential"}, {"gamma", 0.8}}, 0.1, 8),
             {0.1, 0.08, 0.064, 0.0512, 0.04096, 0.032768, 0.0262144, 0.02097152});
}

TEST(LrSchedule, CosineAsCosineAnnealingLROverTheEpochs) {
  const std::vector<double> want = {0.1, 0.0962320368593087, 0.0855017856687341, 0.06944282990207196,
                                    0.0505, 0.03155717009792806, 0.0154982143312659, 0.004767963140691306};
  ExpectNear(EpochRates({{"type", "cosine"}, {"T_max", 8}, {"eta_min", 0.001}}, 0.1, 8), want);
  // T_max defaults to the epochs.
  ExpectNear(EpochRates({{"type", "cosine"}, {"eta_min", 0.001}}, 0.1, 8), want);
}

TEST(LrSchedule, WarmupAsSequentialLinearLRThenTheMainSchedule) {
  // SequentialLR([LinearLR(start_factor=0.25, total_iters=2), CosineAnnealingLR(T_max=6)], [2])
  ExpectNear(EpochRates({{"type", "cosine"}, {"warmup_epochs", 2}, {"warmup_start_factor", 0.25}}, 0.1, 8),
             {0.025, 0.0625, 0.1, 0.09330127018922195, 0.075, 0.05, 0.025, 0.006698729810778065});
}

TEST(LrSchedule, OneCycleAsOneCycleLRPerStepWithMomentum) {
  LrSchedule schedule(CompleteLrScheduleSpec("one_cycle"), 0.1, 4, 5);
  const std::vector<double> lr = {
      0.004, 0.013167184270002533, 0.037167184270002526, 0.06683281572999747, 0.09083281572999748,
      0.1, 0.09874640062350874, 0.09504846320134738, 0.089091617757105, 0.0811745653949763,
      0.07169430017913009, 0.06112620219362893, 0.0500002, 0.03887419780637107, 0.028306099820869922,
      0.0188258346050237, 0.010908782242895003, 0.004951936798652629, 0.0012539993764912555, 4e-07};
  const std::vector<double> momentum = {
      0.95, 0.9404508497187474, 0.9154508497187474, 0.8845491502812526, 0.8595491502812526,
      0.85, 0.8512536043909088, 0.854951556604879, 0.8609084258765984, 0.8688255099070633,
      0.878305813044122, 0.8888739533021842, 0.9, 0.9111260466978157, 0.9216941869558779,
      0.9311744900929366, 0.9390915741234015, 0.945048443395121, 0.9487463956090911, 0.95};
  std::vector<double> got_lr, got_momentum;
  for (int epoch = 1; epoch <= 4; ++epoch) {
    for (int step = 0; step < 5; ++step) {
      got_lr.push_back(schedule.Lr(epoch, step));
      got_momentum.push_back(*schedule.Momentum(epoch, step));
    }
  }
  ExpectNear(got_lr, lr);
  ExpectNear(got_momentum, momentum);
}

TEST(LrSchedule, OneCycleThreePhaseLinear) {
  LrSchedule schedule(CompleteLrScheduleSpec({{"type", "one_cycle"},
                                              {"max_lr", 0.1},
                                              {"three_phase", true},
                                              {"anneal_strategy", "linear"}}),
                      0.5, 2, 10);
  const std::vector<double> want = {0.004, 0.0232, 0.0424, 0.0616, 0.0808, 0.1, 0.0808,
                                    0.0616, 0.0424, 0.0232, 0.004, 0.0035556, 0.0031112, 0.0026668,
                                    0.0022224, 0.001778, 0.0013336, 0.0008892, 0.0004448, 4e-07};
  std::vector<double> got;
  for (int epoch = 1; epoch <= 2; ++epoch) {
    for (int step = 0; step < 10; ++step) got.push_back(schedule.Lr(epoch, step));
  }
  ExpectNear(got, want);
  EXPECT_NEAR(*schedule.Momentum(1, 5), 0.85, 1e-12);
  EXPECT_NEAR(*schedule.Momentum(2, 5), 0.95, 1e-12);
}

TEST(LrSchedule, ReduceOnPlateauAsReduceLROnPlateau) {
  LrSchedule schedule(
      CompleteLrScheduleSpec({{"type", "reduce_on_plateau"}, {"patience", 1}, {"factor", 0.5}, {"cooldown", 1}}),
      0.1, 10, 1);
  const std::vector<double> losses = {1.0, 0.9, 0.95, 0.95, 0.95, 0.8, 0.85, 0.85, 0.85, 0.85};
  std::vector<double> got;
  for (int epoch = 1; epoch <= 10; ++epoch) {
    got.push_back(schedule.Lr(epoch, 0));
    schedule.EndEpoch(losses[epoch - 1]);
  }
  ExpectNear(got, {0.1, 0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.05, 0.025, 0.025});
}

TEST(LrSchedule, ReduceOnPlateauStateRoundTrips) {
  const json spec = CompleteLrScheduleSpec({{"type", "reduce_on_plateau"}, {"patience", 0}});
  LrSchedule a(spec, 0.1, 10, 1);
  a.EndEpoch(1.0);
  a.EndEpoch(1.0);  // no better: lowered to 0.01
  LrSchedule b(spec, 0.1, 10, 1);
  b.Restore(a.State());
  EXPECT_NEAR(b.Lr(3, 0), 0.01, 1e-15);
  EXPECT_EQ(b.State(), a.State());
  EXPECT_TRUE(b.EndEpoch(1.5));
  EXPECT_NEAR(b.Lr(4, 0), 0.001, 1e-15);
}

TEST(LrSchedule, NoneKeepsTheRate) {
  EXPECT_TRUE(CompleteLrScheduleSpec(nullptr).is_null());
  EXPECT_TRUE(CompleteLrScheduleSpec("none").is_null());
  ExpectNear(EpochRates(nullptr, 0.003, 3), {0.003, 0.003, 0.003});
}

TEST(LrSchedule, CompletesEveryOption) {
  EXPECT_EQ(CompleteLrScheduleSpec("cosine"),
            json({{"type", "cosine"}, {"T_max", nullptr}, {"eta_min", 0.0},
                  {"warmup_epochs", 0}, {"warmup_start_factor", 1.0 / 3}}));
  EXPECT_EQ(CompleteLrScheduleSpec("reduce_on_plateau")["patience"], 10);
}

std::string SpecErrorOf(const json& spec) {
  try {
    CompleteLrScheduleSpec(spec);
  } catch (const SpecError& e) {
    return e.what();
  }
  return "no error";
}

TEST(LrSchedule, RefusesWhatTorchRefuses) {
  EXPECT_EQ(SpecErrorOf("linear"),
            "lr_schedule: unknown type \"linear\"; known: step, multistep, exponential, cosine, "
            "one_cycle, reduce_on_plateau, none");
  EXPECT_EQ(SpecErrorOf({{"type", "multistep"}, {"milestones", {5, 2}}}),
            "lr_schedule (multistep): \"milestones\" must be increasing, got [5,2]");
  EXPECT_EQ(SpecErrorOf({{"type", "cosine"}, {"T_max", 0}}),
            "lr_schedule (cosine): \"T_max\" must be a positive integer, got 0");
  EXPECT_EQ(SpecErrorOf({{"type", "step"}, {"step_size", 2}, {"warmup_start_factor", 0}}),
            "lr_schedule (step): \"warmup_start_factor\" must be above 0 and at most 1, got 0");
  EXPECT_EQ(SpecErrorOf({{"type", "one_cycle"}, {"warmup_epochs", 1}}),
            "lr_schedule (one_cycle): unknown field \"warmup_epochs\"");
  EXPECT_EQ(SpecErrorOf({{"type", "reduce_on_plateau"}, {"factor", 1}}),
            "lr_schedule (reduce_on_plateau): \"factor\" must be below 1, got 1");
}

}  // namespace
}  // namespace sparktorch
