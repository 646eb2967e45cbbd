#include "core/progress/epoch_progress.h"

#include <cmath>

#include <gtest/gtest.h>

namespace sparktorch {
namespace {

using nlohmann::json;

EpochProgress Third() {
  EpochProgress p;
  p.epoch = 3;
  p.epochs = 10;
  p.train_loss = 0.32704;
  p.samples_per_second = 19217.9;
  p.elapsed = 4.12;
  return p;
}

TEST(EpochProgress, LineWithAnEstimateOfTheTimeLeft) {
  // 4.12 s for 3 epochs: 1.373 s an epoch, 7 epochs left.
  EXPECT_EQ(ProgressLine(Third()),
            "epoch 3/10: loss 0.3270 | 19217 samples/s, 4.1 s elapsed, ETA 9.6 s");
}

TEST(EpochProgress, AccuraciesAndValidationWhenPresent) {
  EpochProgress p = Third();
  p.train_accuracy = 0.87944;
  p.validation_loss = 0.35021;
  p.validation_accuracy = 0.8727;
  EXPECT_EQ(ProgressLine(p),
            "epoch 3/10: loss 0.3270 accuracy 0.8794 val_loss 0.3502 val_accuracy 0.8727 | 19217 "
            "samples/s, 4.1 s elapsed, ETA 9.6 s");
}

TEST(EpochProgress, NoEstimateOnTheLastEpochOrWithoutAPlan) {
  EpochProgress p = Third();
  p.epoch = 10;
  EXPECT_EQ(ProgressLine(p), "epoch 10/10: loss 0.3270 | 19217 samples/s, 4.1 s elapsed");
  p.epoch = 3;
  p.epochs = 0;
  EXPECT_EQ(ProgressLine(p), "epoch 3: loss 0.3270 | 19217 samples/s, 4.1 s elapsed");
}

TEST(EpochProgress, HogwildLinesCountTheWorkers) {
  EpochProgress p = Third();
  p.workers = 2;
  EXPECT_EQ(ProgressLine(p),
            "epoch 3/10: loss 0.3270 | 2 workers, 19217 samples/s, 4.1 s elapsed, ETA 9.6 s");
  p.workers = 1;
  EXPECT_EQ(ProgressLine(p),
            "epoch 3/10: loss 0.3270 | 1 worker, 19217 samples/s, 4.1 s elapsed, ETA 9.6 s");
}

TEST(EpochProgress, ReadsTheMetricsJsonOfAnEpoch) {
  const json j = {{"epoch", 2},       {"epochs", 3},          {"rows", 2000},
                  {"steps", 32},      {"train_loss", 0.5},    {"train_accuracy", 0.75},
                  {"seconds", 1.5},   {"elapsed", 3.0},       {"samples_per_second", 1333.3},
                  {"validation_loss", 0.625}};
  std::optional<EpochProgress> p = EpochProgressFromJson(j);
  ASSERT_TRUE(p);
  EXPECT_EQ(ProgressLine(*p),
            "epoch 2/3: loss 0.5000 accuracy 0.7500 val_loss 0.6250 | 1333 samples/s, 3.0 s "
            "elapsed, ETA 1.5 s");
}

TEST(EpochProgress, RefusesWhatIsNotAnEpoch) {
  EXPECT_FALSE(EpochProgressFromJson(json::parse("[1, 2]")));
  EXPECT_FALSE(EpochProgressFromJson(json::parse(R"({"train_loss": 0.5})")));
  EXPECT_FALSE(EpochProgressFromJson(json::parse(R"({"epoch": 0, "train_loss": 0.5})")));
  EXPECT_FALSE(EpochProgressFromJson(json::parse(R"({"epoch": 1.5, "train_loss": 0.5})")));
  EXPECT_FALSE(EpochProgressFromJson(json::parse(R"({"epoch": 1, "train_loss": "low"})")));
  EXPECT_FALSE(EpochProgressFromJson(json()));  // what a line that is not JSON parses to
}

TEST(EpochProgress, ALossOverNoRowsIsNan) {
  std::optional<EpochProgress> p =
      EpochProgressFromJson(json::parse(R"({"epoch": 1, "epochs": "two", "train_loss": null})"));
  ASSERT_TRUE(p);
  EXPECT_TRUE(std::isnan(p->train_loss));
  EXPECT_EQ(p->epochs, 0);  // not a number: not known
}

}  // namespace
}  // namespace sparktorch
