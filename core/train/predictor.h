#ifndef SPARKTORCH_CORE_TRAIN_PREDICTOR_H_
#define SPARKTORCH_CORE_TRAIN_PREDICTOR_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <c10/core/Device.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/types.h>

#include "formats/prediction_kind.h"

namespace sparktorch {

// The prediction a model trained with `loss` gives by default: argmax for cross_entropy and
// nll, the class for bce and bce_with_logits, the vector otherwise (a regression's values).
PredictionKind DefaultPrediction(const std::string& loss);

// Runs a model over batches of rows in evaluation mode and formats one line of text per row.
// Not thread-safe.
class Predictor {
 public:
  // `loss` is the loss the model was trained with ("" when unknown: a model from Python), which
  // decides how outputs become probabilities. Throws UsageError when `kind` makes no sense for
  // it (probabilities or classes of a regression).
  Predictor(torch::jit::Module module, c10::Device device, std::vector<int64_t> input_shape,
            PredictionKind kind, const std::string& loss);

  // Predicts `features` ([rows, num_features] float32, on the CPU) and calls `emit` with each
  // row's text, in row order. The text is valid during the call.
  void Predict(const torch::Tensor& features,
               const std::function<void(int64_t row, std::string_view text)>& emit);
  // Predict over `features` in batches of at most `batch_size` rows, so that the memory of a
  // forward pass stays bounded whatever the number of rows; `emit` gets each row's index in
  // `features`. What `train --predict` and `predict` both run.
  void PredictInBatches(const torch::Tensor& features, int64_t batch_size,
                        const std::function<void(int64_t row, std::string_view text)>& emit);

 private:
  torch::jit::Module module_;
  c10::Device device_;
  std::vector<int64_t> input_shape_;
  PredictionKind kind_;
  std::string probability_;  // "softmax", "exp", "sigmoid" or "identity"
  std::string text_;          // reused buffer
};

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_TRAIN_PREDICTOR_H_
