// core/jobs in process: the failure kinds, the row plan, the model plan and the train steps that
// need no peers, without spawning the binary (the bash tests run the end-to-end paths).
#include <c10/util/Exception.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/jobs/failure.h"
#include "core/jobs/model_plan.h"
#include "core/jobs/row_plan.h"
#include "core/jobs/train_run.h"
#include "core/jobs/train_steps.h"
#include "core/net/errors.h"
#include "formats/error.h"

namespace sparktorch {
namespace {

using nlohmann::json;

// The failure CurrentJobFailure makes of what `thrower` throws.
JobFailure FailureOf(const std::function<void()>& thrower) {
  try {
    thrower();
  } catch (...) {
    return CurrentJobFailure();
  }
  ADD_FAILURE() << "nothing was thrown";
  return {FailureKind::kInternal, ""};
}

TEST(JobFailures, EachErrorHasItsKindAndKeepsItsMessage) {
  struct Case {
    std::function<void()> thrower;
    FailureKind kind;
    std::string message;
  };
  const std::vector<Case> cases = {
      {[] { throw UsageError("--epochs: bad"); }, FailureKind::kUsage, "--epochs: bad"},
      {[] { throw InputError("stdin:3: bad row"); }, FailureKind::kInput, "stdin:3: bad row"},
      {[] { throw SpecError("spec.json: bad"); }, FailureKind::kSpec, "spec.json: bad"},
      {[] { throw ModelError("m.pt: bad"); }, FailureKind::kModel, "m.pt: bad"},
      {[] { throw DeviceError("no cuda"); }, FailureKind::kDevice, "no cuda"},
      {[] { throw SpillError("disk full"); }, FailureKind::kSpill, "disk full"},
      {[] { throw PeerError("rank 1 failed: x", true); }, FailureKind::kPeerFailed,
       "rank 1 failed: x"},
      {[] { throw PeerError("rank 1 was lost", false); }, FailureKind::kPeerLost,
       "rank 1 was lost"},
      {[] { throw RendezvousError("rank 2 never arrived"); }, FailureKind::kRendezvous,
       "rank 2 never arrived"},
      {[] { throw RefusedError("wrong secret"); }, FailureKind::kRefused, "wrong secret"},
      {[] { throw Error("out.pt: cannot write"); }, FailureKind::kOutput, "out.pt: cannot write"},
      {[] { throw std::runtime_error("oops"); }, FailureKind::kInternal, "internal error: oops"},
      {[] { throw 42; }, FailureKind::kInternal, "internal error: an unknown exception"},
  };
  for (const Case& c : cases) {
    const JobFailure failure = FailureOf(c.thrower);
    EXPECT_EQ(failure.kind, c.kind) << c.message;
    EXPECT_EQ(failure.message, c.message);
  }
  const JobFailure torch = FailureOf([] { TORCH_CHECK(false, "shapes differ"); });
  EXPECT_EQ(torch.kind, FailureKind::kInternal);
  EXPECT_EQ(torch.message.rfind("LibTorch: shapes differ", 0), 0u) << torch.message;
}

// formats/ names the setting a message is about; the failure names its flag (formats/ knows no
// flag names).
TEST(JobFailures, ASettingAnErrorNamesBecomesItsFlag) {
  const std::vector<std::pair<RowSetting, std::string>> cases = {
      {RowSetting::kNone, "x"},
      {RowSetting::kNumFeatures, "x (--num-features)"},
      {RowSetting::kMaxLineBytes, "x (--max-line-bytes)"},
      {RowSetting::kFeaturesField, "x (--features-field)"},
      {RowSetting::kLabelField, "x (--label-field)"},
      {RowSetting::kIdField, "x (--id-field)"},
      {RowSetting::kAllowNan, "x (--allow-nan accepts it)"},
  };
  for (const auto& [setting, message] : cases) {
    EXPECT_EQ(MessageOf(InputError("x", setting)), message);
    EXPECT_EQ(FailureOf([setting = setting] { throw UsageError("x", setting); }).message, message);
  }
  // A bad row's error, which the row source keeps as an InputError of the same setting.
  EXPECT_EQ(MessageOf(RowError("expected finite features, got nan", 0, RowSetting::kAllowNan)),
            "expected finite features, got nan (--allow-nan accepts it)");
}

// The UsageError message `thrower` throws, or "" when it throws none.
std::string UsageMessage(const std::function<void()>& thrower) {
  try {
    thrower();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(RowPlan, ShapesParseOrSayWhichFlagIsWrong) {
  EXPECT_EQ(ParseShape("1,28,28", "--input-shape"), (std::vector<int64_t>{1, 28, 28}));
  EXPECT_EQ(ParseShape("784", "--input-shape"), (std::vector<int64_t>{784}));
  EXPECT_TRUE(ParseShape("", "--input-shape").empty());
  EXPECT_EQ(UsageMessage([] { ParseShape("1,x", "--input-shape"); }),
            "--input-shape: expected an integer, got \"x\"");
  EXPECT_EQ(UsageMessage([] { ParseShape("3,0", "--input-shape"); }),
            "--input-shape: dimensions must be positive, got 3,0");
}

TEST(RowPlan, FlagsBecomeOverridesOfTheFormat) {
  RowOptions rows{};
  rows.format.emplace("csv");
  rows.label_col = "-3:-1";
  rows.delimiter = "tab";
  rows.on_bad_row = OnBadRow::kSkip;
  rows.max_line_bytes = 1000;
  const RowSourceOptions reader = ReaderOptions(rows);
  EXPECT_EQ(reader.format.kind, RowFormatKind::kCsv);
  EXPECT_EQ(reader.format.label_col, -3);
  EXPECT_EQ(reader.format.label_count, 3);
  EXPECT_EQ(reader.format.delimiter, '\t');
  EXPECT_EQ(reader.on_bad_row, BadRowPolicy::kSkip);
  EXPECT_EQ(reader.max_line_bytes, 1000u);

  RowOptions bad;
  bad.label_col = "3:1";
  EXPECT_EQ(UsageMessage([&] { FormatOverrides(bad); }),
            "--label-col 3:1: expected N:M with N <= M, both from the start or both from the end");
  bad.label_col = "1";
  bad.no_label = true;
  EXPECT_EQ(UsageMessage([&] { FormatOverrides(bad); }),
            "--label-col and --no-label contradict each other");
  RowOptions delimiter;
  delimiter.delimiter = "ab";
  EXPECT_EQ(UsageMessage([&] { FormatOverrides(delimiter); }),
            "--delimiter must be one character, got \"ab\"");
  EXPECT_FALSE(FormatOverrides(RowOptions()).label.has_value());  // nothing given, nothing set
}

// A folder removed with the test, with `spec` written to spec.json in it.
class SpecFile {
 public:
  explicit SpecFile(const json& spec) {
    char pattern[] = "/tmp/sparktorch-jobs-test-XXXXXX";
    dir_ = mkdtemp(pattern);
    std::ofstream(path()) << spec.dump();
  }
  ~SpecFile() { std::filesystem::remove_all(dir_); }
  std::string path() const { return dir_ + "/spec.json"; }
  std::string dir() const { return dir_; }

 private:
  std::string dir_;
};

json MlpSpec() {
  return {{"layers",
           {{{"type", "linear"}, {"in_features", 784}, {"out_features", 16}},
            "relu",
            {{"type", "linear"}, {"in_features", 16}, {"out_features", 10}}}},
          {"loss", "cross_entropy"},
          {"optimizer", {{"type", "adam"}, {"lr", 0.001}}}};
}

TEST(ModelPlan, ASpecPlansItsShapesLossAndOptimizerAndFlagsOverrideThem) {
  SpecFile spec(MlpSpec());
  ModelSource source;
  source.model_path = spec.path();
  ModelPlan plan = PlanModel(source, {}, c10::Device(c10::kCPU));
  EXPECT_EQ(plan.source, "spec");
  EXPECT_TRUE(SpecKnowsInputShape(plan.spec));  // its first linear layer's 784
  EXPECT_EQ(plan.loss_spec, json("cross_entropy"));
  EXPECT_EQ(plan.optimizer_spec["type"], "adam");
  EXPECT_DOUBLE_EQ(plan.optimizer_spec["lr"].get<double>(), 0.001);
  BuildModel(plan, 784, c10::Device(c10::kCPU));
  EXPECT_EQ(plan.input_shape, (std::vector<int64_t>{784}));
  EXPECT_EQ(plan.output_shape, (std::vector<int64_t>{10}));
  ASSERT_TRUE(plan.module.has_value());

  source.loss = "nll";
  source.optimizer = "sgd";
  source.lr = 0.5;
  const ModelPlan overridden = PlanModel(source, {}, c10::Device(c10::kCPU));
  EXPECT_EQ(overridden.loss_spec, json("nll"));
  EXPECT_EQ(overridden.optimizer_spec["type"], "sgd");
  EXPECT_DOUBLE_EQ(overridden.optimizer_spec["lr"].get<double>(), 0.5);
}

TEST(ModelPlan, LabelKindsFollowTheLossAndTheOutput) {
  const Loss cross_entropy = Loss::FromSpec("cross_entropy");
  const Loss mse = Loss::FromSpec("mse");
  EXPECT_EQ(LabelKind(cross_entropy, false, {10}), "class");
  EXPECT_EQ(LabelKind(cross_entropy, true, {10}), "input");
  EXPECT_EQ(LabelKind(mse, false, {1}), "value");
  EXPECT_EQ(LabelKind(mse, false, {3}), "vector");
}

TEST(TrainSteps, LrScalingMultipliesTheRateForTheRanks) {
  auto scaled = [](LrScaling scaling, int ranks) {
    json spec = {{"type", "adam"}, {"lr", 0.01}};
    ScaleLr(scaling, ranks, &spec);
    return spec["lr"].get<double>();
  };
  EXPECT_DOUBLE_EQ(scaled(LrScaling::kNone, 4), 0.01);
  EXPECT_DOUBLE_EQ(scaled(LrScaling::kLinear, 4), 0.04);
  EXPECT_DOUBLE_EQ(scaled(LrScaling::kSqrt, 4), 0.02);
  EXPECT_DOUBLE_EQ(scaled(LrScaling::kLinear, 1), 0.01);  // one rank: as given
}

TEST(TrainSteps, TheValidationSplitIsDisjointWholeAndTheSameForTheSameSeed) {
  Dataset data;
  data.features = torch::arange(100 * 4, torch::kFloat32).reshape({100, 4});
  data.labels = (torch::arange(100, torch::kFloat32) % 10).reshape({100, 1});
  ModelPlan plan;
  plan.input_shape = {4};
  plan.output_shape = {10};
  const Loss loss = Loss::FromSpec("cross_entropy");
  TrainJobOptions options;
  options.validation_fraction = 0.25;
  options.seed = 7;
  const Split a = SplitRows(data, options, plan, loss, false);
  const Split b = SplitRows(data, options, plan, loss, false);
  EXPECT_EQ(a.held_out, 25);
  ASSERT_EQ(a.validation.rows(), 25);
  ASSERT_EQ(a.train.rows(), 75);
  EXPECT_TRUE(torch::equal(a.validation.index, b.validation.index));
  const torch::Tensor all = std::get<0>(torch::cat({a.train.index, a.validation.index}).sort());
  EXPECT_TRUE(torch::equal(all, torch::arange(100, torch::kLong)));  // each row in one set
  options.seed = 8;
  EXPECT_FALSE(torch::equal(SplitRows(data, options, plan, loss, false).validation.index,
                            a.validation.index));
  options.validation_fraction = 0;
  const Split none = SplitRows(data, options, plan, loss, false);
  EXPECT_EQ(none.held_out, 0);
  EXPECT_EQ(none.train.rows(), 100);
}

TEST(TrainSteps, TheJobKeyChangesWithWhatDecidesTheTrainingOnly) {
  SpecFile spec(MlpSpec());
  TrainJobOptions job;
  job.model.model_path = spec.path();
  job.epochs = 3;
  const std::string key = TrainJobKey(job);
  EXPECT_FALSE(key.empty());
  EXPECT_EQ(TrainJobKey(job), key);  // the same job, the same key
  TrainJobOptions elsewhere = job;   // where it runs is not the job
  elsewhere.device = "auto";
  elsewhere.output_path = "/elsewhere/model.pt";
  elsewhere.send_model = true;
  EXPECT_EQ(TrainJobKey(elsewhere), key);
  for (const auto& change : std::vector<std::function<void(TrainJobOptions&)>>{
           [](TrainJobOptions& j) { j.epochs = 4; },
           [](TrainJobOptions& j) { j.seed = 1; },
           [](TrainJobOptions& j) { j.lr_scaling = LrScaling::kSqrt; },
           [](TrainJobOptions& j) { j.model.lr = 0.1; }}) {
    TrainJobOptions other = job;
    change(other);
    EXPECT_NE(TrainJobKey(other), key);
  }
  EXPECT_EQ(UsageMessage([] {
              TrainJobOptions missing;
              missing.model.model_path = "/nonexistent/spec.json";
              TrainJobKey(missing);
            }),
            "--model /nonexistent/spec.json: cannot read this file");
}

}  // namespace
}  // namespace sparktorch
