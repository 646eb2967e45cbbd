#ifndef SPARKTORCH_CORE_MODEL_SHAPE_H_
#define SPARKTORCH_CORE_MODEL_SHAPE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "formats/error.h"

namespace sparktorch {

// The number of values in a tensor of `shape` (1 for a scalar).
inline int64_t Product(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// "1,28,28", as --input-shape takes it.
inline std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string s;
  for (int64_t d : shape) {
    if (!s.empty()) s += ',';
    s += std::to_string(d);
  }
  return s;
}

// The features a row must have for a model whose input is `input_shape`, checked against
// --num-features (`num_features`; 0 when not given). Throws UsageError when they differ.
inline int64_t RowFeaturesFor(const std::vector<int64_t>& input_shape, int64_t num_features) {
  const int64_t want = Product(input_shape);
  if (num_features > 0 && num_features != want) {
    throw UsageError("--num-features " + std::to_string(num_features) +
                     " does not match the model's input of " + std::to_string(want) + " values");
  }
  return want;
}

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_MODEL_SHAPE_H_
