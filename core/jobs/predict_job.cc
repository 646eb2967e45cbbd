#include "core/jobs/predict_job.h"

#include <cerrno>
#include <chrono>
#include <cstring>

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include "core/data/input_files.h"
#include "core/device.h"
#include "core/model/model_file.h"
#include "core/model/shape.h"
#include "core/jobs/row_plan.h"
#include "core/model/spec_compiler.h"
#include "core/train/predictor.h"
#include "formats/error.h"

namespace sparktorch {
namespace {

// Writes prediction lines, checking for a failed write once at the end (a failed flush leaves
// the stream's error set for Finish).
class LineWriter {
 public:
  explicit LineWriter(std::FILE* out) : out_(out) {}
  void Write(std::string_view id, std::string_view value) {
    if (!id.empty()) {
      std::fwrite(id.data(), 1, id.size(), out_);
      std::fputc('\t', out_);
    }
    std::fwrite(value.data(), 1, value.size(), out_);
    std::fputc('\n', out_);
  }
  // Hands the lines written so far to the reader: each batch's predictions leave at once, so a
  // reader that pairs rows with their answers (the Spark layer's one-pass pipe) holds a batch of
  // rows, not the whole input, until they come.
  void Flush() { std::fflush(out_); }
  void Finish() {
    if (std::fflush(out_) != 0 || std::ferror(out_)) {
      throw Error(std::string("stdout: cannot write predictions: ") + std::strerror(errno));
    }
  }

 private:
  std::FILE* out_;
};

// How rows are read and predicted: the model's manifest (rows as it was trained on, the label
// optional) with the flags laid over it, or the flags over the defaults for a model without one.
struct PredictSetup {
  RowFormat format;
  std::vector<int64_t> input_shape;  // empty: learned from the first row
  std::string loss;
  PredictionKind kind;
};

// The flags' values, parsed before any file is read.
struct PredictFlags {
  RowFormatOverrides overrides;
  std::vector<int64_t> input_shape;
  std::optional<PredictionKind> prediction;
};

PredictFlags ParseFlags(const PredictJobOptions& options) {
  PredictFlags flags{FormatOverrides(options.rows),
                     ParseShape(options.rows.input_shape, "--input-shape"), options.prediction};
  return flags;
}

PredictSetup Setup(const PredictJobOptions& options, const PredictFlags& flags,
                   const ModelFile& model) {
  PredictSetup setup;
  RowFormat base;
  setup.input_shape = flags.input_shape;
  std::optional<PredictionKind> default_prediction;
  if (model.manifest) {
    base = model.manifest->row_format;
    if (setup.input_shape.empty()) setup.input_shape = model.manifest->input_shape;
    setup.loss = model.manifest->loss.is_object() ? model.manifest->loss.value("type", "") : "";
    default_prediction = ValueIn(kPredictionKindNames, model.manifest->prediction);
  }
  // Prediction rows may carry a label or not, unless told otherwise.
  if (base.label != LabelPresence::kNone) base.label = LabelPresence::kOptional;
  RowFormat& format = setup.format = ApplyOverrides(base, flags.overrides);
  if (!setup.input_shape.empty()) {
    format.num_features = RowFeaturesFor(setup.input_shape, format.num_features);
  }
  if (format.label == LabelPresence::kOptional && format.num_features == 0 &&
      (format.kind == RowFormatKind::kCsv || format.kind == RowFormatKind::kCompact ||
       format.kind == RowFormatKind::kFloat32)) {
    // Without a known width, a label column cannot be told from a feature.
    spdlog::info("{}: the model does not say how many features a row has; rows are read "
                 "without a label (give --num-features or --input-shape to allow one)",
                 options.model_path);
    format.label = LabelPresence::kNone;
  }
  setup.kind =
      flags.prediction.value_or(default_prediction.value_or(DefaultPrediction(setup.loss)));
  return setup;
}

// Rows gathered into batches in input order and predicted a batch at a time; a skipped bad row
// keeps its place as an empty line.
class Batches {
 public:
  Batches(const PredictJobOptions& options, ModelFile& model, PredictSetup& setup,
          c10::Device device, LineWriter& writer)
      : options_(options), model_(model), setup_(setup), device_(device), writer_(writer) {}

  void AddSkipped() { slots_.push_back(-1); }

  void Add(const Row& row) {
    width_ = static_cast<int64_t>(row.features.size());
    features_.insert(features_.end(), row.features.begin(), row.features.end());
    if (!row.id.empty()) {
      ids_.resize(rows_);  // rows before it had none
      ids_.push_back(row.id);
    } else if (!ids_.empty()) {
      ids_.emplace_back();
    }
    slots_.push_back(rows_++);
    if (rows_ == options_.batch_size) Flush();
  }

  void Flush() {
    std::vector<std::string> texts;
    if (rows_ > 0) texts = Predict();
    for (int64_t slot : slots_) {
      if (slot < 0) {
        writer_.Write({}, {});
      } else {
        writer_.Write(slot < static_cast<int64_t>(ids_.size()) ? ids_[slot] : std::string_view(),
                      texts[slot]);
      }
    }
    writer_.Flush();
    slots_.clear();
    ids_.clear();
    features_.clear();
    rows_ = 0;
  }

 private:
  std::vector<std::string> Predict() {
    if (!predictor_) {
      std::vector<int64_t>& shape = setup_.input_shape;
      if (shape.empty()) shape = {width_};
      try {
        ProbeOutputShape(model_.module, shape);
      } catch (const SpecError& e) {
        throw UsageError(
            options_.model_path + ": " + e.what() +
            (model_.manifest ? std::string()
                             : " (a model without a sparktorch manifest reads every column as a "
                               "feature: give --num-features or --input-shape so that a label "
                               "column is recognised)"));
      }
      predictor_.emplace(model_.module, device_, shape, setup_.kind, setup_.loss);
    }
    torch::Tensor batch = torch::from_blob(features_.data(), {rows_, width_}, torch::kFloat32);
    std::vector<std::string> texts(rows_);
    predictor_->PredictInBatches(batch, options_.batch_size,
                                 [&](int64_t i, std::string_view text) { texts[i] = text; });
    return texts;
  }

  const PredictJobOptions& options_;
  ModelFile& model_;
  PredictSetup& setup_;
  c10::Device device_;
  LineWriter& writer_;
  std::optional<Predictor> predictor_;
  std::vector<int64_t> slots_;  // each entry: a row of the batch, or -1 for a skipped bad row
  std::vector<std::string> ids_;
  std::vector<float> features_;
  int64_t rows_ = 0;
  int64_t width_ = 0;
};

}  // namespace

void RunPredictJob(const PredictJobOptions& options, std::FILE* out) {
  const PredictFlags flags = ParseFlags(options);
  ConfigureCpu(options.threads > 0 ? options.threads : DefaultThreads());
  const auto started = std::chrono::steady_clock::now();
  const c10::Device device = ResolveDevice(options.device);
  if (options.batch_size < 1) {
    throw UsageError("--batch-size must be at least 1 for predict, got " +
                     std::to_string(options.batch_size));
  }
  ModelFile model = ReadModelFile(options.model_path, device);
  PredictSetup setup = Setup(options, flags, model);
  if (!options.group_end.empty() && setup.format.kind == RowFormatKind::kParquet) {
    throw UsageError("--group-end reads lines; it cannot be used with --format parquet");
  }
  const std::vector<std::string> inputs =
      ExpandInputPaths(options.rows.inputs, setup.format.kind == RowFormatKind::kParquet);
  RowSource source(inputs, RowSourceOptions{setup.format, BadRowPolicyOf(options.rows),
                                            options.rows.max_line_bytes, 0, 1, options.group_end});
  LineWriter writer(out);
  Batches batches(options, model, setup, device, writer);
  Row row;
  int64_t skipped_before = 0;
  int64_t groups = 0, group_rows_before = 0;
  auto group_started = std::chrono::steady_clock::now();
  for (;;) {
    bool more = source.Next(&row);
    for (; skipped_before < source.rows_skipped(); ++skipped_before) batches.AddSkipped();
    if (more) {
      batches.Add(row);
      continue;
    }
    if (!source.group_ended()) break;
    batches.Flush();
    // Said before the group's end goes out: a reader that hands this process to its next group
    // when the end arrives must not find this group's line in the next group's stderr.
    const auto now = std::chrono::steady_clock::now();
    spdlog::info("predicted {} rows in {:.2f} s (group {} of this process)",
                 source.rows_read() - group_rows_before,
                 std::chrono::duration<double>(now - group_started).count(), ++groups);
    group_rows_before = source.rows_read();
    group_started = now;
    writer.Write({}, options.group_end);
    writer.Flush();
  }
  batches.Flush();
  writer.Finish();
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  spdlog::info("predicted {} rows in {:.2f} s ({:.0f} rows/s){}{}", source.rows_read(), seconds,
               seconds > 0 ? source.rows_read() / seconds : 0.0,
               groups > 0 ? " in " + std::to_string(groups) + " groups" : std::string(),
               source.rows_skipped() > 0
                   ? ", " + std::to_string(source.rows_skipped()) + " bad rows skipped (empty lines)"
                   : std::string());
}

}  // namespace sparktorch
