#ifndef SPARKTORCH_CORE_DATA_DATASET_H_
#define SPARKTORCH_CORE_DATA_DATASET_H_

#include <cstdint>
#include <string>
#include <vector>

#include <torch/types.h>

#include "core/data/row_source.h"

namespace sparktorch {

// Rows held in memory as tensors: training passes over them once per epoch, and stdin can be
// read only once.
struct Dataset {
  torch::Tensor features;        // [rows, num_features] float32
  torch::Tensor labels;          // [rows, label values] float32; [rows, 0] without labels
  std::vector<std::string> ids;  // one per row when rows carry ids, else empty

  int64_t rows() const { return features.defined() ? features.size(0) : 0; }
};

// Reads every row of `source` into memory. Zero rows give empty tensors of the right width
// (0 columns when nothing is known). Throws what the source throws, and InputError when rows
// disagree on the number of label values or some rows have ids and others not.
Dataset ReadDataset(RowSource& source);

// Rows `indices` (int64) of `data`.
Dataset SelectRows(const Dataset& data, const torch::Tensor& indices);

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_DATA_DATASET_H_
