#include "core/data/dataset.h"

#include <torch/torch.h>

#include "core/data/float_buffer.h"
#include "formats/error.h"

namespace sparktorch {
namespace {

// Hands a buffer's memory to a tensor without copying it.
torch::Tensor AdoptFloats(FloatBuffer&& values, int64_t rows, int64_t cols) {
  const auto options = torch::TensorOptions().dtype(torch::kFloat32);
  size_t bytes = 0;
  float* data = values.Release(&bytes);
  if (data == nullptr) return torch::empty({rows, cols}, options);
  return torch::from_blob(
      data, {rows, cols}, [data, bytes](void*) { FloatBuffer::Free(data, bytes); }, options);
}

}  // namespace

Dataset ReadDataset(RowSource& source, SpillBudget* budget) {
  FloatBuffer features(budget);  // most of the memory: see float_buffer.h
  FloatBuffer labels(budget);
  std::vector<std::string> ids;
  Row row;
  int64_t rows = 0;
  size_t label_width = 0;
  bool has_ids = false;
  while (source.Next(&row)) {
    if (rows == 0) {
      label_width = row.label.size();
      has_ids = !row.id.empty();
    } else if (row.label.size() != label_width) {
      throw InputError("row " + std::to_string(rows + 1) + " has " +
                       std::to_string(row.label.size()) + " label values where row 1 had " +
                       std::to_string(label_width));
    }
    features.Append(row.features.data(), row.features.size());
    labels.Append(row.label.data(), row.label.size());
    if (has_ids) ids.push_back(row.id);
    ++rows;
  }
  int64_t width = source.num_features();
  Dataset data;
  data.features = AdoptFloats(std::move(features), rows, width);
  data.labels = AdoptFloats(std::move(labels), rows, static_cast<int64_t>(label_width));
  data.ids = std::move(ids);
  return data;
}

}  // namespace sparktorch
