#ifndef SPARKTORCH_CORE_MODEL_SPEC_FIELDS_H_
#define SPARKTORCH_CORE_MODEL_SPEC_FIELDS_H_

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace sparktorch {

// Reads the fields of one object of a JSON spec (a layer, the loss, the optimizer) with
// validation, so that every mistake is reported as a SpecError that names the object and the
// field: `layer 2 (conv2d): "kernel_size" must be a positive integer, got -1`.
// Call Done() after reading to refuse fields that no reader asked for (typos).
class SpecFields {
 public:
  // `context` prefixes every message ("layer 2 (conv2d)", "optimizer (adam)"). `object` must
  // outlive this reader; a non-object is refused at once.
  SpecFields(const nlohmann::json& object, std::string context);

  // Required fields throw when absent; the others return `fallback` when absent or null.
  int64_t PositiveInt(const char* key);
  int64_t Int(const char* key, int64_t fallback, int64_t min_value);
  double Number(const char* key, double fallback, double min_value, double max_value);
  bool Bool(const char* key, bool fallback);
  std::string String(const char* key, const std::string& fallback,
                     const std::vector<std::string>& allowed);
  // An integer or a list of `dims` integers, each >= min_value; an integer n stands for
  // {n, ..., n}. Required when fallback is empty.
  std::vector<int64_t> IntOrList(const char* key, size_t dims, int64_t min_value,
                                 const std::vector<int64_t>& fallback);
  // A non-empty list of positive integers; required.
  std::vector<int64_t> PositiveList(const char* key);
  std::optional<int64_t> OptionalInt(const char* key);
  // A list of exactly `n` numbers, each in [min_value, max_value).
  std::vector<double> NumberList(const char* key, size_t n, double min_value, double max_value,
                                 const std::vector<double>& fallback);

  // A non-empty list of numbers, each >= min_value, of any length; empty when absent or null.
  std::vector<double> Numbers(const char* key, double min_value);

  // Throws SpecError for the first field not read (other than "type").
  void Done() const;

  [[noreturn]] void Fail(const std::string& key, const std::string& what) const;

 private:
  // A required field is absent: says so, and names the fields not yet read, where a misspelt
  // one is likely to be ("; unread fields: in_feature").
  [[noreturn]] void Missing(const std::string& key, const std::string& what) const;
  const nlohmann::json* Find(const char* key);

  const nlohmann::json& object_;
  std::string context_;
  std::set<std::string> read_;
};

// The "type" of a spec object given as a string ("adam") or an object ({"type": "adam", ...}).
// Throws SpecError with `context` when neither.
std::string SpecType(const nlohmann::json& value, const std::string& context);

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_MODEL_SPEC_FIELDS_H_
