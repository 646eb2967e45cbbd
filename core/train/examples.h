#ifndef SPARKTORCH_CORE_TRAIN_EXAMPLES_H_
#define SPARKTORCH_CORE_TRAIN_EXAMPLES_H_

#include <cstdint>
#include <vector>

#include "core/data/dataset.h"
#include "core/train/loss.h"
#include "core/train/trainer.h"

namespace sparktorch {

// Shapes a dataset for a model and loss: inputs to [rows, *input_shape]; targets to class
// indices (cross_entropy, nll), to [rows, *output_shape] from the labels, or, when
// `target_is_input` (rows without labels: an autoencoder), from the features themselves.
// Throws UsageError when the sizes cannot match ("--input-shape 1,28,28 holds 784 values, but
// rows have 780 features").
Examples MakeExamples(const Dataset& data, const Loss& loss, const std::vector<int64_t>& input_shape,
                      const std::vector<int64_t>& output_shape, bool target_is_input);

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_TRAIN_EXAMPLES_H_
