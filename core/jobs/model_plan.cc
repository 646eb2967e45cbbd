#include "core/jobs/model_plan.h"

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include "core/files.h"
#include "core/model/model_file.h"
#include "core/model/spec_compiler.h"
#include "core/version.h"
#include "formats/error.h"

namespace sparktorch {
namespace {

using nlohmann::json;

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The plan of a model sparktorch trained (or served): everything comes from its manifest.
ModelPlan PlanFromManifest(ModelFile file) {
  ModelPlan plan;
  plan.module = file.module;
  plan.manifest = file.manifest;
  plan.source = file.manifest->source;
  plan.spec = file.manifest->spec;
  plan.input_shape = file.manifest->input_shape;
  plan.loss_spec = file.manifest->loss;
  plan.optimizer_spec = file.manifest->optimizer;
  plan.lr_schedule_spec = file.manifest->lr_schedule;
  return plan;
}

// --lr-schedule: a JSON object as it is; a type takes the file's options when the file names the
// same type, else the type's defaults.
json LrScheduleOverride(const std::string& flag, const json& from_file) {
  if (!flag.empty() && flag[0] == '{') {
    json parsed = json::parse(flag, nullptr, false);
    if (parsed.is_discarded()) throw SpecError("--lr-schedule: not a JSON object: " + flag);
    return parsed;
  }
  if (from_file.is_object() && from_file.value("type", "") == flag) return from_file;
  return flag;
}

}  // namespace

// The spec's first linear layer fixes the input when nothing else does.
bool SpecKnowsInputShape(const json& spec) {
  if (spec.contains("input_shape")) return true;
  const json* layers = spec.contains("layers") ? &spec["layers"] : nullptr;
  return layers && layers->is_array() && !layers->empty() && (*layers)[0].is_object() &&
         (*layers)[0].value("type", "") == "linear";
}

ModelPlan PlanModel(const ModelSource& source, const std::vector<int64_t>& input_shape,
                    c10::Device device) {
  ModelPlan plan;
  json config;  // where loss and optimizer come from
  if (EndsWith(source.model_path, ".json")) {
    plan.source = "spec";
    plan.spec = ReadJsonFile(source.model_path);
    CheckSpec(plan.spec);
    config = plan.spec;
  } else {
    ModelFile file = ReadModelFile(source.model_path, device);
    plan.module = file.module;
    plan.manifest = file.manifest;
    plan.optimizer_state = file.optimizer_state;
    if (file.manifest) {
      spdlog::info("continuing training of {} (trained by sparktorch {})", source.model_path,
                   file.manifest->sparktorch_version);
      plan.source = file.manifest->source;
      plan.spec = file.manifest->spec;
      plan.input_shape = file.manifest->input_shape;
      config = {{"loss", file.manifest->loss},
                {"optimizer", file.manifest->optimizer},
                {"lr_schedule", file.manifest->lr_schedule}};
    } else {
      plan.source = "torchscript";
      std::string config_path = source.train_config;
      if (config_path.empty()) {
        std::string beside = source.model_path.substr(0, source.model_path.rfind('.')) + ".json";
        if (FileExists(beside)) {
          spdlog::info("loss and optimizer from {}", beside);
          config_path = beside;
        }
      }
      if (!config_path.empty()) config = ReadJsonFile(config_path);
    }
  }
  if (!source.train_config.empty() && plan.source == "spec" && !plan.manifest) {
    // A spec carries its own loss, optimizer and schedule; a config file given as well overrides them.
    json extra = ReadJsonFile(source.train_config);
    for (const char* key : {"loss", "optimizer", "lr_schedule"}) {
      if (extra.contains(key)) config[key] = extra[key];
    }
  }
  if (!config.is_object()) config = json::object();

  // Flags win over files; files over defaults.
  plan.loss_spec = source.loss ? json(*source.loss)
                                : config.value("loss", json("cross_entropy"));
  if (source.optimizer) {
    plan.optimizer_spec = {{"type", *source.optimizer}};
    json from_file = config.value("optimizer", json());
    if (from_file.is_object() && from_file.value("type", "") == *source.optimizer) {
      plan.optimizer_spec = from_file;
    }
  } else {
    plan.optimizer_spec = config.value("optimizer", json("adam"));
  }
  if (plan.optimizer_spec.is_string()) plan.optimizer_spec = {{"type", plan.optimizer_spec}};
  if (source.lr) {
    if (!plan.optimizer_spec.is_object()) {
      throw SpecError("optimizer: expected a name or an object with a \"type\"");
    }
    plan.optimizer_spec["lr"] = *source.lr;
  }
  plan.lr_schedule_spec = config.value("lr_schedule", json());
  if (source.lr_schedule) plan.lr_schedule_spec = LrScheduleOverride(*source.lr_schedule, plan.lr_schedule_spec);
  if (!input_shape.empty()) plan.input_shape = input_shape;
  return plan;
}

ModelPlan PlanServedModel(const std::string& bytes, const std::string& name, c10::Device device) {
  ModelFile file = ReadModelBytes(bytes, name, device);
  if (!file.manifest) throw ModelError(name + ": the model comes without its sparktorch manifest");
  return PlanFromManifest(std::move(file));
}

void BuildModel(ModelPlan& plan, int64_t num_features, c10::Device device) {
  if (!plan.module) {
    CompiledSpec compiled = CompileSpec(plan.spec, plan.input_shape, num_features);
    plan.module = compiled.module;
    plan.input_shape = compiled.input_shape;
    plan.output_shape = compiled.output_shape;
    plan.module->to(device);
    return;
  }
  if (plan.input_shape.empty()) {
    if (num_features == 0) return;  // after the rows
    plan.input_shape = {num_features};
  }
  plan.output_shape = ProbeOutputShape(*plan.module, plan.input_shape);
}

Manifest PlanManifest(const ModelPlan& plan, const Loss& loss, const nlohmann::json& optimizer_spec,
                      const RowFormat& format, bool no_label, PredictionKind prediction) {
  Manifest manifest;
  manifest.sparktorch_version = kVersion;
  manifest.source = plan.source;
  manifest.spec = plan.spec;
  manifest.input_shape = plan.input_shape;
  manifest.output_shape = plan.output_shape;
  manifest.row_format = format;
  manifest.row_format.num_features = Product(plan.input_shape);
  manifest.label_kind = LabelKind(loss, no_label, plan.output_shape);
  manifest.num_classes =
      loss.takes_class_index() && !plan.output_shape.empty() ? plan.output_shape[0] : 0;
  manifest.prediction = NameIn(kPredictionKindNames, prediction);
  manifest.loss = loss.ToJson();
  manifest.optimizer = optimizer_spec;
  manifest.lr_schedule = plan.lr_schedule_spec;
  return manifest;
}

std::string LabelKind(const Loss& loss, bool no_label, const std::vector<int64_t>& output_shape) {
  if (no_label) return "input";
  if (loss.takes_class_index()) return "class";
  return Product(output_shape) == 1 ? "value" : "vector";
}

void WriteJobModel(RecordWriter& records, const std::string& output_path,
                   const torch::jit::Module& module, const Manifest& manifest,
                   const std::string& optimizer_state) {
  if (output_path.empty()) {
    records.WriteModel(SerializeModel(module, manifest, optimizer_state));
  } else {
    WriteModelFile(output_path, module, manifest, optimizer_state);
    spdlog::info("model written to {}", output_path);
  }
}

}  // namespace sparktorch
