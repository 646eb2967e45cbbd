#include "core/model/spec_fields.h"

#include <cmath>

#include "formats/error.h"

namespace sparktorch {
namespace {

using nlohmann::json;

std::string Shown(const json& value) {
  std::string text = value.dump();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

}  // namespace

SpecFields::SpecFields(const json& object, std::string context)
    : object_(object), context_(std::move(context)) {
  if (!object_.is_object()) {
    throw SpecError(context_ + ": expected a JSON object, got " + Shown(object_));
  }
  read_.insert("type");
}

const json* SpecFields::Find(const char* key) {
  read_.insert(key);
  auto it = object_.find(key);
  if (it == object_.end() || it->is_null()) return nullptr;
  return &*it;
}

void SpecFields::Fail(const std::string& key, const std::string& what) const {
  throw SpecError(context_ + ": \"" + key + "\" " + what);
}

void SpecFields::Missing(const std::string& key, const std::string& what) const {
  std::string unread;
  for (auto it = object_.begin(); it != object_.end(); ++it) {
    if (read_.count(it.key()) == 0) unread += (unread.empty() ? "" : ", ") + it.key();
  }
  Fail(key, "is required (" + what + ")" + (unread.empty() ? "" : "; unread fields: " + unread));
}

int64_t SpecFields::PositiveInt(const char* key) {
  const json* v = Find(key);
  if (!v) Missing(key, "a positive integer");
  if (!v->is_number_integer() || v->get<int64_t>() < 1) {
    Fail(key, "must be a positive integer, got " + Shown(*v));
  }
  return v->get<int64_t>();
}

int64_t SpecFields::Int(const char* key, int64_t fallback, int64_t min_value) {
  const json* v = Find(key);
  if (!v) return fallback;
  if (!v->is_number_integer() || v->get<int64_t>() < min_value) {
    Fail(key, "must be an integer >= " + std::to_string(min_value) + ", got " + Shown(*v));
  }
  return v->get<int64_t>();
}

std::optional<int64_t> SpecFields::OptionalInt(const char* key) {
  const json* v = Find(key);
  if (!v) return std::nullopt;
  if (!v->is_number_integer()) Fail(key, "must be an integer, got " + Shown(*v));
  return v->get<int64_t>();
}

double SpecFields::Number(const char* key, double fallback, double min_value, double max_value) {
  const json* v = Find(key);
  if (!v) return fallback;
  if (!v->is_number()) Fail(key, "must be a number, got " + Shown(*v));
  double x = v->get<double>();
  if (!std::isfinite(x) || x < min_value || x > max_value) {
    std::string range = "[" + json(min_value).dump() + ", " + json(max_value).dump() + "]";
    if (std::isinf(max_value)) range = ">= " + json(min_value).dump();
    Fail(key, "must be a number " + range + ", got " + Shown(*v));
  }
  return x;
}

bool SpecFields::Bool(const char* key, bool fallback) {
  const json* v = Find(key);
  if (!v) return fallback;
  if (!v->is_boolean()) Fail(key, "must be true or false, got " + Shown(*v));
  return v->get<bool>();
}

std::string SpecFields::String(const char* key, const std::string& fallback,
                               const std::vector<std::string>& allowed) {
  const json* v = Find(key);
  if (!v) return fallback;
  std::string choices;
  for (const std::string& a : allowed) choices += (choices.empty() ? "" : ", ") + a;
  if (!v->is_string()) Fail(key, "must be one of " + choices + ", got " + Shown(*v));
  std::string s = v->get<std::string>();
  for (const std::string& a : allowed) {
    if (s == a) return s;
  }
  Fail(key, "must be one of " + choices + ", got " + Shown(*v));
}

std::vector<int64_t> SpecFields::IntOrList(const char* key, size_t dims, int64_t min_value,
                                           const std::vector<int64_t>& fallback) {
  const json* v = Find(key);
  std::string want = "must be an integer >= " + std::to_string(min_value) + " or a list of " +
                     std::to_string(dims) + " such integers, got ";
  if (!v) {
    if (fallback.empty()) Missing(key, "an integer or a list of " + std::to_string(dims));
    return fallback;
  }
  if (v->is_number_integer()) {
    if (v->get<int64_t>() < min_value) Fail(key, want + Shown(*v));
    return std::vector<int64_t>(dims, v->get<int64_t>());
  }
  if (!v->is_array() || v->size() != dims) Fail(key, want + Shown(*v));
  std::vector<int64_t> out;
  for (const json& e : *v) {
    if (!e.is_number_integer() || e.get<int64_t>() < min_value) Fail(key, want + Shown(*v));
    out.push_back(e.get<int64_t>());
  }
  return out;
}

std::vector<int64_t> SpecFields::PositiveList(const char* key) {
  const json* v = Find(key);
  if (!v) Missing(key, "a list of positive integers");
  if (v->is_number_integer() && v->get<int64_t>() > 0) return {v->get<int64_t>()};
  if (!v->is_array() || v->empty()) Fail(key, "must be a list of positive integers, got " + Shown(*v));
  std::vector<int64_t> out;
  for (const json& e : *v) {
    if (!e.is_number_integer() || e.get<int64_t>() < 1) {
      Fail(key, "must be a list of positive integers, got " + Shown(*v));
    }
    out.push_back(e.get<int64_t>());
  }
  return out;
}

std::vector<double> SpecFields::NumberList(const char* key, size_t n, double min_value,
                                           double max_value, const std::vector<double>& fallback) {
  const json* v = Find(key);
  if (!v) return fallback;
  std::string want = "must be a list of " + std::to_string(n) + " numbers in [" +
                     json(min_value).dump() + ", " + json(max_value).dump() + "), got ";
  if (!v->is_array() || v->size() != n) Fail(key, want + Shown(*v));
  std::vector<double> out;
  for (const json& e : *v) {
    if (!e.is_number() || e.get<double>() < min_value || e.get<double>() >= max_value) {
      Fail(key, want + Shown(*v));
    }
    out.push_back(e.get<double>());
  }
  return out;
}

std::vector<double> SpecFields::Numbers(const char* key, double min_value) {
  const json* v = Find(key);
  if (!v) return {};
  const std::string want = "must be a non-empty list of numbers >= " + json(min_value).dump() + ", got ";
  if (!v->is_array() || v->empty()) Fail(key, want + Shown(*v));
  std::vector<double> out;
  for (const json& e : *v) {
    if (!e.is_number() || !std::isfinite(e.get<double>()) || e.get<double>() < min_value) {
      Fail(key, want + Shown(*v));
    }
    out.push_back(e.get<double>());
  }
  return out;
}

void SpecFields::Done() const {
  for (auto it = object_.begin(); it != object_.end(); ++it) {
    if (read_.count(it.key()) == 0) {
      throw SpecError(context_ + ": unknown field \"" + it.key() + "\"");
    }
  }
}

std::string SpecType(const json& value, const std::string& context) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_object()) {
    auto it = value.find("type");
    if (it != value.end() && it->is_string()) return it->get<std::string>();
    throw SpecError(context + ": \"type\" is required (a string)");
  }
  throw SpecError(context + ": expected a name or an object with a \"type\", got " + Shown(value));
}

}  // namespace sparktorch
