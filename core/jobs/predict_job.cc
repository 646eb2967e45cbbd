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
#include "core/model/spec_compiler.h"
#include "formats/error.h"

namespace sparktorch {
namespace {

// Writes prediction lines, checking for a failed write once at the end.
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
  void Finish() {
    if (std::fflush(out_) != 0 || std::ferror(out_)) {
      throw Error(std::string("stdout: cannot write predictions: ") + std::strerror(errno));
    }
  }

 private:
  std::FILE* out_;
};

}  // namespace

void RunPredictJob(const PredictJobOptions& options, std::FILE* out) {
  ConfigureCpu(options.threads > 0 ? options.threads : DefaultThreads());
  const auto started = std::chrono::steady_clock::now();
  const c10::Device device = ResolveDevice(options.device);
  if (options.batch_size < 1) {
    throw UsageError("--batch-size must be at least 1 for predict, got " +
                     std::to_string(options.batch_size));
  }
  ModelFile model = ReadModelFile(options.model_path, device);

  RowFormat base;
  std::vector<int64_t> input_shape = options.input_shape;
  std::string loss;
  std::optional<PredictionKind> default_prediction;
  if (model.manifest) {
    base = model.manifest->row_format;
    if (input_shape.empty()) input_shape = model.manifest->input_shape;
    loss = model.manifest->loss.is_object() ? model.manifest->loss.value("type", "") : "";
    default_prediction = ParsePredictionKind(model.manifest->prediction);
  }
  // Prediction rows may carry a label or not, unless told otherwise.
  if (base.label != LabelPresence::kNone) base.label = LabelPresence::kOptional;
  RowFormat format = ApplyOverrides(base, options.format);
  if (!input_shape.empty()) format.num_features = RowFeaturesFor(input_shape, format.num_features);
  if (format.label == LabelPresence::kOptional && format.num_features == 0 &&
      (format.kind == RowFormatKind::kCsv || format.kind == RowFormatKind::kCompact)) {
    // Without a known width, a label column cannot be told from a feature.
    spdlog::info("{}: the model does not say how many features a row has; rows are read "
                 "without a label (give --num-features or --input-shape to allow one)",
                 options.model_path);
    format.label = LabelPresence::kNone;
  }

  const std::vector<std::string> inputs = ExpandInputPaths(options.inputs);
  RowSource source(inputs, RowSourceOptions{format, options.on_bad_row, options.max_line_bytes});

  std::optional<Predictor> predictor;
  const PredictionKind kind =
      options.prediction.value_or(default_prediction.value_or(DefaultPrediction(loss)));
  LineWriter writer(out);

  // A batch in input order: each entry is a row of the batch, or -1 for a skipped bad row.
  std::vector<int64_t> slots;
  std::vector<std::string> ids;
  std::vector<float> features;
  int64_t batch_rows = 0;
  int64_t width = 0;
  auto flush = [&] {
    if (batch_rows > 0) {
      if (!predictor) {
        if (input_shape.empty()) input_shape = {width};
        try {
          ProbeOutputShape(model.module, input_shape);
        } catch (const SpecError& e) {
          throw UsageError(
              options.model_path + ": " + e.what() +
              (model.manifest ? std::string()
                              : " (a model without a sparktorch manifest reads every column as a "
                                "feature: give --num-features or --input-shape so that a label "
                                "column is recognised)"));
        }
        predictor.emplace(model.module, device, input_shape, kind, loss);
      }
      torch::Tensor batch = torch::from_blob(features.data(), {batch_rows, width}, torch::kFloat32);
      std::vector<std::string> texts(batch_rows);
      predictor->Predict(batch, [&](int64_t i, std::string_view text) { texts[i] = text; });
      for (int64_t slot : slots) {
        if (slot < 0) {
          writer.Write({}, {});
        } else {
          writer.Write(slot < static_cast<int64_t>(ids.size()) ? ids[slot] : std::string_view(),
                       texts[slot]);
        }
      }
    } else {
      for (size_t i = 0; i < slots.size(); ++i) writer.Write({}, {});
    }
    slots.clear();
    ids.clear();
    features.clear();
    batch_rows = 0;
  };

  Row row;
  int64_t skipped_before = 0;
  for (;;) {
    bool more = source.Next(&row);
    for (; skipped_before < source.rows_skipped(); ++skipped_before) slots.push_back(-1);
    if (!more) break;
    width = static_cast<int64_t>(row.features.size());
    features.insert(features.end(), row.features.begin(), row.features.end());
    if (!row.id.empty()) {
      ids.resize(batch_rows);  // rows before it had none
      ids.push_back(row.id);
    } else if (!ids.empty()) {
      ids.emplace_back();
    }
    slots.push_back(batch_rows++);
    if (batch_rows == options.batch_size) flush();
  }
  flush();
  writer.Finish();
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  spdlog::info("predicted {} rows in {:.2f} s ({:.0f} rows/s){}", source.rows_read(), seconds,
               seconds > 0 ? source.rows_read() / seconds : 0.0,
               source.rows_skipped() > 0
                   ? ", " + std::to_string(source.rows_skipped()) + " bad rows skipped (empty lines)"
                   : std::string());
}

}  // namespace sparktorch
