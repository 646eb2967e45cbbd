#include "formats/manifest.h"

#include "formats/error.h"

namespace sparktorch {
namespace {

using nlohmann::json;

const char* LabelPresenceName(LabelPresence presence) {
  switch (presence) {
    case LabelPresence::kRequired:
      return "required";
    case LabelPresence::kNone:
      return "none";
    case LabelPresence::kOptional:
      return "optional";
  }
  return "required";
}

// Reads `key` from `object` when present, converting with nlohmann's rules; a value of the wrong
// type is a ModelError naming the key.
template <typename T>
void ReadOptional(const json& object, const char* context, const char* key, T* out) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return;
  try {
    *out = it->get<T>();
  } catch (const json::exception&) {
    throw ModelError(std::string("manifest: ") + context + "." + key + " has the wrong type (" +
                     it->type_name() + ")");
  }
}

}  // namespace

json RowFormatToJson(const RowFormat& format) {
  json j = {
      {"format", RowFormatKindName(format.kind)},
      {"num_features", format.num_features},
      {"label", LabelPresenceName(format.label)},
      {"label_col", format.label_col},
      {"label_count", format.label_count},
      {"delimiter", std::string(1, format.delimiter)},
      {"header", format.header},
      {"zero_based", format.zero_based},
      {"features_field", format.features_field},
      {"label_field", format.label_field},
      {"id_field", format.id_field},
      {"allow_nan", format.allow_nan},
  };
  j["id_col"] = format.id_col ? json(*format.id_col) : json(nullptr);
  return j;
}

RowFormat RowFormatFromJson(const json& j) {
  if (!j.is_object()) throw ModelError("manifest: row_format is not an object");
  RowFormat format;
  std::string kind = "csv";
  ReadOptional(j, "row_format", "format", &kind);
  auto parsed = ParseRowFormatKind(kind);
  if (!parsed) throw ModelError("manifest: row_format.format \"" + kind + "\" is not a known format");
  format.kind = *parsed;
  ReadOptional(j, "row_format", "num_features", &format.num_features);
  std::string label = "required";
  ReadOptional(j, "row_format", "label", &label);
  if (label == "required") {
    format.label = LabelPresence::kRequired;
  } else if (label == "none") {
    format.label = LabelPresence::kNone;
  } else if (label == "optional") {
    format.label = LabelPresence::kOptional;
  } else {
    throw ModelError("manifest: row_format.label \"" + label + "\" is not required, none or optional");
  }
  ReadOptional(j, "row_format", "label_col", &format.label_col);
  ReadOptional(j, "row_format", "label_count", &format.label_count);
  std::string delimiter(1, format.delimiter);
  ReadOptional(j, "row_format", "delimiter", &delimiter);
  if (delimiter.size() != 1) throw ModelError("manifest: row_format.delimiter must be one character");
  format.delimiter = delimiter[0];
  ReadOptional(j, "row_format", "header", &format.header);
  ReadOptional(j, "row_format", "zero_based", &format.zero_based);
  ReadOptional(j, "row_format", "features_field", &format.features_field);
  ReadOptional(j, "row_format", "label_field", &format.label_field);
  ReadOptional(j, "row_format", "id_field", &format.id_field);
  ReadOptional(j, "row_format", "allow_nan", &format.allow_nan);
  auto id_col = j.find("id_col");
  if (id_col != j.end() && !id_col->is_null()) {
    if (!id_col->is_number_integer()) throw ModelError("manifest: row_format.id_col must be an integer");
    format.id_col = id_col->get<int64_t>();
  }
  return format;
}

json ManifestToJson(const Manifest& m) {
  return json{
      {"format_version", m.format_version},
      {"sparktorch_version", m.sparktorch_version},
      {"source", m.source},
      {"spec", m.spec},
      {"input_shape", m.input_shape},
      {"output_shape", m.output_shape},
      {"row_format", RowFormatToJson(m.row_format)},
      {"label_kind", m.label_kind},
      {"num_classes", m.num_classes},
      {"prediction", m.prediction},
      {"loss", m.loss},
      {"optimizer", m.optimizer},
      {"lr_schedule", m.lr_schedule},
      {"training", m.training},
      {"metrics", m.metrics},
      {"history", m.history},
  };
}

Manifest ManifestFromJson(const json& j) {
  if (!j.is_object()) throw ModelError("manifest: not a JSON object");
  Manifest m;
  m.format_version = 0;
  ReadOptional(j, "manifest", "format_version", &m.format_version);
  if (m.format_version != kManifestFormatVersion) {
    throw ModelError("manifest: format_version " + std::to_string(m.format_version) +
                     " is not one this sparktorch reads (it reads " +
                     std::to_string(kManifestFormatVersion) + ")");
  }
  ReadOptional(j, "manifest", "sparktorch_version", &m.sparktorch_version);
  ReadOptional(j, "manifest", "source", &m.source);
  ReadOptional(j, "manifest", "input_shape", &m.input_shape);
  ReadOptional(j, "manifest", "output_shape", &m.output_shape);
  if (j.contains("row_format")) m.row_format = RowFormatFromJson(j.at("row_format"));
  ReadOptional(j, "manifest", "label_kind", &m.label_kind);
  ReadOptional(j, "manifest", "num_classes", &m.num_classes);
  ReadOptional(j, "manifest", "prediction", &m.prediction);
  auto copy = [&](const char* key, json* out) {
    auto it = j.find(key);
    if (it != j.end()) *out = *it;
  };
  copy("spec", &m.spec);
  copy("loss", &m.loss);
  copy("optimizer", &m.optimizer);
  copy("lr_schedule", &m.lr_schedule);
  copy("training", &m.training);
  copy("metrics", &m.metrics);
  auto history = j.find("history");
  if (history != j.end() && !history->is_null()) {
    if (!history->is_array()) {
      throw ModelError(std::string("manifest: manifest.history has the wrong type (") +
                       history->type_name() + ")");
    }
    m.history = *history;
  }
  return m;
}

}  // namespace sparktorch
