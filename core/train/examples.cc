#include "core/train/examples.h"

#include <torch/torch.h>

#include "core/model/shape.h"
#include "formats/error.h"

namespace sparktorch {
namespace {

std::vector<int64_t> WithRows(int64_t rows, const std::vector<int64_t>& shape) {
  std::vector<int64_t> out = {rows};
  out.insert(out.end(), shape.begin(), shape.end());
  return out;
}

}  // namespace

Examples MakeExamples(const Dataset& data, const Loss& loss, const std::vector<int64_t>& input_shape,
                      const std::vector<int64_t>& output_shape, bool target_is_input) {
  const int64_t rows = data.rows();
  const int64_t features = data.features.size(1);
  if (rows == 0) {
    // An empty partition: no examples, of the right shapes, so that it can take empty steps.
    Examples empty;
    empty.inputs = torch::empty(WithRows(0, input_shape));
    empty.targets = loss.takes_class_index() && !target_is_input
                        ? torch::empty({0}, torch::kLong)
                        : torch::empty(WithRows(0, output_shape));
    return empty;
  }
  if (Product(input_shape) != features) {
    throw UsageError("the model takes rows of shape " + ShapeText(input_shape) + " (" +
                     std::to_string(Product(input_shape)) + " values), but rows have " +
                     std::to_string(features) + " features");
  }
  Examples ex;
  ex.inputs = data.features.reshape(WithRows(rows, input_shape));
  if (target_is_input) {
    if (loss.takes_class_index()) {
      throw UsageError("rows without labels train an autoencoder, which needs a loss that "
                       "compares outputs with inputs (mse, l1, smooth_l1, bce, bce_with_logits), "
                       "not " + loss.name());
    }
    if (Product(output_shape) != features) {
      throw UsageError("rows without labels make the input the target, but the model outputs " +
                       std::to_string(Product(output_shape)) + " values per row for " +
                       std::to_string(features) + " features");
    }
    ex.targets = data.features.reshape(WithRows(rows, output_shape));
    return ex;
  }
  if (loss.takes_class_index()) {
    if (data.labels.size(1) != 1) {
      throw UsageError(loss.name() + " takes one class index per row as the label, but rows have " +
                       std::to_string(data.labels.size(1)) + " label values");
    }
    ex.targets = data.labels.select(1, 0);
    ex.class_index = true;
  } else {
    if (data.labels.size(1) != Product(output_shape)) {
      throw UsageError("the model outputs " + std::to_string(Product(output_shape)) +
                       " values per row, but rows have " + std::to_string(data.labels.size(1)) +
                       " label values (--label-col N:M for a vector label)");
    }
    ex.targets = data.labels.reshape(WithRows(rows, output_shape));
  }
  return ex;
}

}  // namespace sparktorch
