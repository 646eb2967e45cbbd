#ifndef SPARKTORCH_CORE_DATA_DATASET_H_
#define SPARKTORCH_CORE_DATA_DATASET_H_

#include <cstdint>
#include <string>
#include <vector>

#include <torch/types.h>

#include "core/data/row_source.h"
#include "core/data/spill.h"

namespace sparktorch {

// Rows held as tensors: training passes over them once per epoch, and stdin can be read only
// once. Their floats are anonymous memory, or a mapping of a spill file (core/data/spill.h).
struct Dataset {
  torch::Tensor features;        // [rows, num_features] float32
  torch::Tensor labels;          // [rows, label values] float32; [rows, 0] without labels
  std::vector<std::string> ids;  // one per row when rows carry ids, else empty

  int64_t rows() const { return features.defined() ? features.size(0) : 0; }
};

// Reads every row of `source`: into memory, or, with a budget, into memory until the budget is
// spent and into a spill file after. Zero rows give empty tensors of the right width (0
// columns when nothing is known). Throws what the source throws, SpillError, and InputError
// when rows disagree on the number of label values.
Dataset ReadDataset(RowSource& source, SpillBudget* budget = nullptr);

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_DATA_DATASET_H_
