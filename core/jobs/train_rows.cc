#include <algorithm>
#include <chrono>

#include <spdlog/spdlog.h>

#include "core/data/dataset.h"
#include "core/data/input_files.h"
#include "core/jobs/train_steps.h"
#include "core/model/shape.h"
#include "core/train/examples.h"
#include "formats/error.h"

// The rows of a train job: this rank's reader, its rows and the world's, the model built once
// they are known, and the validation split.
namespace sparktorch {
namespace {

// "a.csv, b.csv", or for more than 3 inputs "a.parquet, b.parquet and 198 more files" (a
// Parquet directory is expanded to its files, which can be thousands: not one log line).
std::string DescribeInputNames(const std::vector<std::string>& inputs) {
  constexpr size_t kNamed = 3;
  const size_t named = inputs.size() > kNamed ? kNamed - 1 : inputs.size();
  std::string names;
  for (size_t i = 0; i < named; ++i) {
    names += (names.empty() ? "" : ", ") + InputDisplayName(inputs[i]);
  }
  if (named < inputs.size()) {
    names += " and " + std::to_string(inputs.size() - named) + " more files";
  }
  return names;
}

SpillOptions RowSpillOptions(const TrainJobOptions& options) {
  SpillOptions spill;
  std::string source = "--row-memory";
  spill.memory_bytes = options.row_memory ? *options.row_memory : DefaultRowMemory(&source);
  spill.dir = options.spill_dir.empty() ? DefaultSpillDir() : options.spill_dir;
  spdlog::debug("rows beyond {} of memory ({}) spill to {}", SizeText(spill.memory_bytes), source,
                spill.dir);
  return spill;
}

std::string SkippedText(int64_t skipped, const char* prefix, const char* suffix) {
  return skipped > 0 ? prefix + std::to_string(skipped) + suffix : std::string();
}

}  // namespace

RowSourceOptions RankReaderOptions(const TrainJobOptions& options, const TrainRun& run,
                                   const TrainMode& mode, const Communicator& comm,
                                   c10::Device device, ModelPlan& plan) {
  RowSourceOptions row_options = run.reader;
  if (mode.plans_model() && (plan.module || SpecKnowsInputShape(plan.spec) ||
                             !plan.input_shape.empty() || row_options.format.num_features > 0)) {
    BuildModel(plan, row_options.format.num_features, device);
  }
  if (!plan.input_shape.empty()) {
    row_options.format.num_features =
        RowFeaturesFor(plan.input_shape, row_options.format.num_features);
  }
  if (comm.world_size() > 1 && !options.rows.inputs.empty()) {
    row_options.share_rank = comm.rank();
    row_options.share_world = comm.world_size();
  }
  return row_options;
}

RankRows ReadRankRows(const TrainJobOptions& options, const RowSourceOptions& row_options,
                      const RowCheck& check, Communicator& comm, const TrainMode& mode) {
  RankRows rows;
  rows.inputs =
      ExpandInputPaths(options.rows.inputs, row_options.format.kind == RowFormatKind::kParquet);
  rows.names = DescribeInputNames(rows.inputs);
  const auto reading = std::chrono::steady_clock::now();
  RowSource source(rows.inputs, row_options, check);
  SpillBudget budget(RowSpillOptions(options));
  const size_t row_memory = budget.options().memory_bytes;
  rows.data = ReadDataset(source, &budget);
  rows.spilled_bytes = budget.spilled_bytes();
  rows.read_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - reading).count();
  rows.rows_read = source.rows_read();
  rows.rows_skipped = source.rows_skipped();
  const Dataset& data = rows.data;
  const int world_size = comm.world_size();
  const std::string where = world_size > 1 ? "rank " + std::to_string(comm.rank()) + ": " : "";
  const std::string all_bad = SkippedText(rows.rows_skipped, " (all ", " were bad and skipped)");
  if (data.rows() == 0 && world_size == 1 && mode.plans_model()) {
    throw InputError(rows.names + ": no rows to train on" +
                     (all_bad.empty() ? " (empty input)" : all_bad));
  }
  double all_rows = static_cast<double>(data.rows());
  double width = data.rows() > 0 ? static_cast<double>(data.features.size(1)) : 0;
  comm.AllreduceSum(&all_rows, 1);
  comm.AllreduceMax(&width, 1);
  rows.world_rows = static_cast<int64_t>(all_rows);
  rows.width = static_cast<int64_t>(width);
  if (all_rows == 0 && mode.plans_model()) {
    throw InputError("no rank has rows to train on (all " + std::to_string(world_size) +
                     " partitions are empty or bad)");
  }
  if (data.rows() == 0) {
    spdlog::warn("{}no rows in this partition{}; it takes part {}", where, all_bad,
                 mode.without_rows());
  } else {
    spdlog::info("{}read {} rows of {} features from {}{}{}", where, data.rows(),
                 data.features.size(1), rows.names,
                 SkippedText(rows.rows_skipped, " (", " bad rows skipped)"),
                 rows.spilled_bytes > 0 ? "; they outgrew --row-memory (" + SizeText(row_memory) +
                                              ") and went to a spill file, " +
                                              SizeText(rows.spilled_bytes)
                                        : std::string());
  }
  if (data.rows() > 0 && data.features.size(1) != rows.width) {
    throw InputError(rows.names + ": rows have " + std::to_string(data.features.size(1)) +
                     " features, another rank's have " + std::to_string(rows.width));
  }
  return rows;
}

void BuildAfterRows(ModelPlan& plan, const RankRows& rows, const Loss& loss, bool no_label,
                    c10::Device device) {
  if (!plan.output_shape.empty()) return;
  BuildModel(plan, rows.width, device);
  if (no_label) return;
  // Through a pointer: indexing the tensor row by row costs microseconds a row.
  const torch::Tensor labels = rows.data.labels.contiguous();
  const int64_t width = labels.size(1);
  const float* values = labels.data_ptr<float>();
  std::vector<float> label(static_cast<size_t>(width));
  for (int64_t i = 0; i < rows.data.rows(); ++i) {
    std::copy(values + i * width, values + (i + 1) * width, label.begin());
    std::string problem = loss.CheckLabel(label, plan.output_shape);
    if (!problem.empty()) {
      throw InputError(rows.names + ": row " + std::to_string(i + 1) + ": " + problem);
    }
  }
}

Split SplitRows(const Dataset& data, const TrainJobOptions& options, const ModelPlan& plan,
                const Loss& loss, bool no_label) {
  // Both sets are views of the rows read, told apart by index: never a copy of them.
  Split split;
  split.train = MakeExamples(data, loss, plan.input_shape, plan.output_shape, no_label);
  split.held_out = static_cast<int64_t>(data.rows() * options.validation_fraction);
  if (split.held_out > 0) {
    torch::Generator gen = at::detail::createCPUGenerator(options.seed ^ 0x5eed5eedULL);
    torch::Tensor order = torch::randperm(data.rows(), gen, torch::kLong);
    split.validation = split.train;
    split.validation.index = std::get<0>(order.narrow(0, 0, split.held_out).sort());
    split.train.index =
        std::get<0>(order.narrow(0, split.held_out, data.rows() - split.held_out).sort());
  }
  return split;
}

}  // namespace sparktorch
