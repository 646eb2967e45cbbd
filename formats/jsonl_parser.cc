#include "formats/jsonl_parser.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <vector>

#include "formats/error.h"

namespace sparktorch {
namespace {

using nlohmann::json;

// Larger sparse sizes are taken for garbage rather than allocated (1 GiB of floats).
constexpr int64_t kMaxVectorSize = int64_t{1} << 28;

const char* TypeName(const json& j) {
  switch (j.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::string:
      return "a string";
    case json::value_t::array:
      return "an array";
    case json::value_t::object:
      return "an object";
    case json::value_t::binary:
      return "binary data";
    case json::value_t::discarded:
      return "nothing";
    default:
      return "a number";
  }
}

std::string Features(int64_t n) { return n == 1 ? "1 feature" : std::to_string(n) + " features"; }

// nlohmann's message without its "[json.exception.parse_error.101] parse error at line 1,
// column 6: " prefix: the line and column are the row source's and RowError's business.
std::string JsonMessage(const json::exception& e) {
  std::string message = e.what();
  size_t start = message.find("] ");
  start = start == std::string::npos ? 0 : start + 2;
  if (message.compare(start, 14, "parse error at") == 0) {
    const size_t colon = message.find(": ", start);
    if (colon != std::string::npos) start = colon + 2;
  }
  return message.substr(start);
}

constexpr size_t kNoIndex = ~size_t{0};

// `path` and `index` (kNoIndex: none) say where `j` is, for messages: field "features"[3].
float ToFloat(const json& j, const std::string& path, size_t index, bool allow_nan) {
  auto where = [&] { return index == kNoIndex ? path : path + "[" + std::to_string(index) + "]"; };
  if (!j.is_number()) throw RowError(where() + ": expected a number, got " + TypeName(j), 0);
  const float v = static_cast<float>(j.get<double>());
  if (!allow_nan && !std::isfinite(v)) {
    throw RowError(where() + ": expected a finite number, got " + j.dump(), 0);
  }
  return v;
}

void ReadNumbers(const json& array, const std::string& path, bool allow_nan,
                 std::vector<float>* out) {
  out->resize(array.size());
  size_t i = 0;
  for (const json& item : array) {
    (*out)[i] = ToFloat(item, path, i, allow_nan);
    ++i;
  }
}

const json& Member(const json& vector, const char* name, const std::string& path, const char* kind,
                   bool (json::*is_type)() const, const char* type_name) {
  const auto it = vector.find(name);
  if (it == vector.end()) {
    throw RowError(path + ": missing \"" + name + "\" in a " + kind + " vector", 0);
  }
  if (!((*it).*is_type)()) {
    throw RowError(path + ".\"" + name + "\": expected " + type_name + ", got " + TypeName(*it), 0);
  }
  return *it;
}

// Reads a Spark ML vector object into *out, densified. Returns whether it was sparse.
bool ReadSparkVector(const json& vector, const std::string& path, bool allow_nan,
                     std::vector<float>* out) {
  const auto type = vector.find("type");
  if (type == vector.end() || !type->is_number_integer() || type->get<int64_t>() < 0 ||
      type->get<int64_t>() > 1) {
    throw RowError(path + ": expected \"type\" 0 (sparse) or 1 (dense), got " +
                       (type == vector.end() ? std::string("none") : type->dump()),
                   0);
  }
  if (type->get<int64_t>() == 1) {
    const json& values =
        Member(vector, "values", path, "dense", &json::is_array, "an array of numbers");
    ReadNumbers(values, path + ".\"values\"", allow_nan, out);
    return false;
  }
  const json& size_json =
      Member(vector, "size", path, "sparse", &json::is_number_integer, "an integer");
  const json& indices = Member(vector, "indices", path, "sparse", &json::is_array, "an array");
  const json& values = Member(vector, "values", path, "sparse", &json::is_array, "an array");
  const int64_t size = size_json.get<int64_t>();
  if (size < 1 || size > kMaxVectorSize) {
    throw RowError(path + ".\"size\": expected an integer from 1 to " +
                       std::to_string(kMaxVectorSize) + ", got " + size_json.dump(),
                   0);
  }
  if (indices.size() != values.size()) {
    const size_t n = indices.size();
    const size_t k = values.size();
    throw RowError(path + ": expected as many values as indices, got " +
                       (n == 1 ? std::string("1 index") : std::to_string(n) + " indices") +
                       " and " + std::to_string(k) + (k == 1 ? " value" : " values"),
                   0);
  }
  out->assign(static_cast<size_t>(size), 0.0f);
  const std::string values_path = path + ".\"values\"";
  int64_t previous = -1;
  for (size_t k = 0; k < indices.size(); ++k) {
    const json& index_json = indices[k];
    if (!index_json.is_number_integer() || index_json.get<int64_t>() < 0) {
      throw RowError(path + ".\"indices\"[" + std::to_string(k) + "]: expected an index, got " +
                         (index_json.is_number() ? index_json.dump() : TypeName(index_json)),
                     0);
    }
    const int64_t index = index_json.get<int64_t>();
    if (index >= size) {
      throw RowError(path + ": index " + std::to_string(index) + " out of range 0.." +
                         std::to_string(size - 1),
                     0);
    }
    if (index <= previous) {
      throw RowError(path + ": index " + std::to_string(index) + " after " +
                         std::to_string(previous) + ": indices must be ascending",
                     0);
    }
    (*out)[static_cast<size_t>(index)] = ToFloat(values[k], values_path, k, allow_nan);
    previous = index;
  }
  return true;
}

// Reads an array of numbers or a Spark ML vector into *out. Returns whether it was sparse.
bool ReadVector(const json& j, const std::string& path, bool allow_nan, std::vector<float>* out) {
  if (j.is_array()) {
    ReadNumbers(j, path, allow_nan, out);
    return false;
  }
  if (j.is_object()) return ReadSparkVector(j, path, allow_nan, out);
  throw RowError(path + ": expected an array of numbers or a Spark vector, got " + TypeName(j), 0);
}

}  // namespace

JsonlParser::JsonlParser(const RowFormat& format)
    : num_features_(format.num_features),
      label_(format.label),
      features_field_(format.features_field),
      label_field_(format.label_field),
      id_field_(format.id_field),
      allow_nan_(format.allow_nan) {
  if (features_field_.empty()) throw UsageError("jsonl needs the name of the features field");
  if (label_ != LabelPresence::kNone && label_field_.empty()) {
    throw UsageError("jsonl needs the name of the label field");
  }
}

void JsonlParser::Parse(std::string_view line, Row* row) {
  const size_t first = line.find_first_not_of(" \t");
  if (first == std::string_view::npos) throw RowError("empty line", 0);
  json object;
  try {
    object = json::parse(line.begin(), line.end());
  } catch (const json::parse_error& e) {
    throw RowError("invalid JSON: " + JsonMessage(e), std::min<size_t>(e.byte, line.size() + 1));
  } catch (const json::exception& e) {  // a number out of range, say
    throw RowError("invalid JSON: " + JsonMessage(e), 0);
  }
  if (!object.is_object()) {
    throw RowError(std::string("expected a JSON object, got ") + TypeName(object), first + 1);
  }

  const auto features = object.find(features_field_);
  if (features == object.end()) throw RowError("missing field \"" + features_field_ + "\"", 0);
  const bool sparse =
      ReadVector(*features, "field \"" + features_field_ + "\"", allow_nan_, &row->features);
  const auto size = static_cast<int64_t>(row->features.size());
  if (num_features_ > 0 && size != num_features_) {
    throw RowError("expected " + Features(num_features_) + ", got " +
                       (sparse ? "a sparse vector of size " : "") + std::to_string(size),
                   0);
  }
  if (size == 0) throw RowError("expected at least 1 feature, got 0", 0);

  row->label.clear();
  if (label_ != LabelPresence::kNone) {
    const auto label = object.find(label_field_);
    if (label == object.end() || label->is_null()) {
      if (label_ == LabelPresence::kRequired) {
        throw RowError("missing field \"" + label_field_ + "\"", 0);
      }
    } else if (label->is_number()) {
      row->label.assign(1, ToFloat(*label, "field \"" + label_field_ + "\"", kNoIndex, allow_nan_));
    } else if (label->is_array() || label->is_object()) {
      ReadVector(*label, "field \"" + label_field_ + "\"", allow_nan_, &row->label);
      if (row->label.empty()) {
        throw RowError("field \"" + label_field_ + "\": expected a label, got an empty array", 0);
      }
    } else {
      throw RowError("field \"" + label_field_ +
                         "\": expected a number or an array of numbers, got " + TypeName(*label),
                     0);
    }
  }

  row->id.clear();
  if (!id_field_.empty()) {
    const auto id = object.find(id_field_);
    if (id == object.end()) throw RowError("missing field \"" + id_field_ + "\"", 0);
    if (id->is_string()) {
      row->id = id->get_ref<const std::string&>();
    } else if (id->is_number_integer()) {
      row->id = id->dump();
    } else {
      throw RowError("field \"" + id_field_ + "\": expected a string or an integer, got " +
                         (id->is_number() ? id->dump() : TypeName(*id)),
                     0);
    }
  }
  num_features_ = size;
}

}  // namespace sparktorch
