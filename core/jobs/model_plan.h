#ifndef SPARKTORCH_CORE_JOBS_MODEL_PLAN_H_
#define SPARKTORCH_CORE_JOBS_MODEL_PLAN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <c10/core/Device.h>
#include <nlohmann/json.hpp>
#include <torch/csrc/jit/api/module.h>

#include "core/jobs/model_source.h"
#include "core/model/shape.h"
#include "core/train/loss.h"
#include "core/train/predictor.h"
#include "formats/row_format.h"
#include "formats/manifest.h"
#include "formats/records.h"

namespace sparktorch {

// The model being trained and what is known about it before the rows are read.
struct ModelPlan {
  std::string source;  // "spec" or "torchscript"
  nlohmann::json spec;           // the JSON spec, when there is one
  std::optional<torch::jit::Module> module;  // loaded, or compiled once the shape is known
  std::optional<Manifest> manifest;          // of a model sparktorch trained before
  nlohmann::json loss_spec;
  nlohmann::json optimizer_spec;
  nlohmann::json lr_schedule_spec;  // null: none
  std::string optimizer_state;      // of a model sparktorch trained, when its file has it
  std::vector<int64_t> input_shape;
  std::vector<int64_t> output_shape;
};

// Where the model, its loss and its optimizer come from: the spec, a trained model's manifest,
// or a TorchScript model with its training config; flags override files. `input_shape`:
// source.input_shape parsed (ParseShape in core/jobs/row_plan.h); empty: the model's or the rows'.
ModelPlan PlanModel(const ModelSource& source, const std::vector<int64_t>& input_shape,
                    c10::Device device);

// The plan of a model a hogwild parameter server sent (a .pt with its manifest); `name` is for
// messages.
ModelPlan PlanServedModel(const std::string& bytes, const std::string& name, c10::Device device);

// True when the spec fixes its input shape (an "input_shape", or a first linear layer).
bool SpecKnowsInputShape(const nlohmann::json& spec);

// Compiles the spec (when the model comes from one and is not yet built) and learns the output
// shape. `num_features` is 0 when no row has been read yet.
void BuildModel(ModelPlan& plan, int64_t num_features, c10::Device device);

// The manifest's label_kind: "input", "class", "value" or "vector".
std::string LabelKind(const Loss& loss, bool no_label, const std::vector<int64_t>& output_shape);

// The manifest of the planned (and built) model: what it is, how its rows are read (`format`,
// with num_features from the model), its labels, loss and optimizer. The caller adds the
// training settings and metrics.
Manifest PlanManifest(const ModelPlan& plan, const Loss& loss, const nlohmann::json& optimizer_spec,
                      const RowFormat& format, bool no_label, PredictionKind prediction);

// Writes a job's trained model where it was asked for: to `output_path` (saying so in the log),
// or, when that is empty, as model records.
void WriteJobModel(RecordWriter& records, const std::string& output_path,
                   const torch::jit::Module& module, const Manifest& manifest,
                   const std::string& optimizer_state = "");

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_JOBS_MODEL_PLAN_H_
