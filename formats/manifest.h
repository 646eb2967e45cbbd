#ifndef SPARKTORCH_FORMATS_MANIFEST_H_
#define SPARKTORCH_FORMATS_MANIFEST_H_

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "formats/row_format.h"

namespace sparktorch {

// The name of the manifest inside a model file (a TorchScript zip's extra file).
inline constexpr const char* kManifestFileName = "sparktorch.json";
inline constexpr int kManifestFormatVersion = 1;

// What a trained model carries about itself, so that predicting needs only the model file.
// Serialised as JSON (see ManifestToJson); unknown fields are ignored when reading, so a newer
// sparktorch's models stay readable as long as format_version matches.
struct Manifest {
  int format_version = kManifestFormatVersion;
  std::string sparktorch_version;
  std::string source;         // "spec" (compiled from a JSON spec) or "torchscript"
  nlohmann::json spec;        // the JSON spec when source == "spec", else null

  std::vector<int64_t> input_shape;   // per row, e.g. {784} or {1, 28, 28}
  std::vector<int64_t> output_shape;  // per row, e.g. {10}
  RowFormat row_format;               // how training rows were read
  std::string label_kind;             // "class", "value", "vector" or "input" (no label)
  int64_t num_classes = 0;            // for label_kind "class"
  std::string prediction = "argmax";  // the default --prediction for this model

  nlohmann::json loss;        // {"type": "cross_entropy", ...}
  nlohmann::json optimizer;   // {"type": "adam", "lr": 0.001, ...}
  nlohmann::json lr_schedule;  // {"type": "cosine", ...}; null: none (added later, like history)
  nlohmann::json training;    // epochs, batch_size, seed, validation_pct, ...
  nlohmann::json metrics;     // final metrics of the last training run
  // The last training run's metrics, one object per epoch in order (as `--metrics` writes them;
  // for hogwild, the epochs the parameter server decided). A field added after the others:
  // readers that do not know it ignore it, and a manifest without it reads as an empty array.
  nlohmann::json history = nlohmann::json::array();
};

nlohmann::json ManifestToJson(const Manifest& manifest);
// Throws ModelError naming the field at fault, or the version when it is not one this build reads.
Manifest ManifestFromJson(const nlohmann::json& json);

nlohmann::json RowFormatToJson(const RowFormat& format);
// Throws ModelError naming the field at fault.
RowFormat RowFormatFromJson(const nlohmann::json& json);

}  // namespace sparktorch

#endif  // SPARKTORCH_FORMATS_MANIFEST_H_
