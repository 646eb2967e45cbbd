#include "core/train/predictor.h"

#include <algorithm>
#include <charconv>

#include <torch/torch.h>

#include "formats/error.h"

namespace sparktorch {

PredictionKind DefaultPrediction(const std::string& loss) {
  if (loss == "cross_entropy" || loss == "nll") return PredictionKind::kArgmax;
  if (loss == "bce" || loss == "bce_with_logits") return PredictionKind::kClass;
  return PredictionKind::kVector;
}

Predictor::Predictor(torch::jit::Module module, c10::Device device,
                     std::vector<int64_t> input_shape, PredictionKind kind, const std::string& loss)
    : module_(std::move(module)), device_(device), input_shape_(std::move(input_shape)), kind_(kind) {
  module_.eval();
  if (loss == "cross_entropy" || loss.empty()) {
    probability_ = "softmax";
  } else if (loss == "nll") {
    probability_ = "exp";
  } else if (loss == "bce_with_logits") {
    probability_ = "sigmoid";
  } else if (loss == "bce") {
    probability_ = "identity";
  } else if (kind == PredictionKind::kProbabilities || kind == PredictionKind::kClass) {
    throw UsageError(std::string("--prediction ") + NameIn(kPredictionKindNames, kind) +
                     " needs a classifier; this model was trained with " + loss +
                     " (use --prediction vector)");
  }
  // A multi-class model's class is its argmax; a binary (or multi-label) one's, each output's
  // probability against 0.5.
  if (kind_ == PredictionKind::kClass && (probability_ == "softmax" || probability_ == "exp")) {
    kind_ = PredictionKind::kArgmax;
  }
}

void Predictor::Predict(const torch::Tensor& features,
                        const std::function<void(int64_t, std::string_view)>& emit) {
  const int64_t rows = features.size(0);
  if (rows == 0) return;
  torch::NoGradGuard no_grad;
  std::vector<int64_t> shape = {rows};
  shape.insert(shape.end(), input_shape_.begin(), input_shape_.end());
  torch::Tensor out = module_.forward({features.reshape(shape).to(device_)}).toTensor();
  out = out.reshape({rows, -1});
  if (kind_ == PredictionKind::kArgmax) {
    torch::Tensor classes = out.argmax(1).to(torch::kCPU).contiguous();
    const int64_t* c = classes.data_ptr<int64_t>();
    char buf[24];
    for (int64_t i = 0; i < rows; ++i) {
      auto end = std::to_chars(buf, buf + sizeof buf, c[i]).ptr;
      emit(i, std::string_view(buf, end - buf));
    }
    return;
  }
  if (kind_ == PredictionKind::kClass) {
    // sigmoid(x) >= 0.5 exactly when x >= 0.
    out = out.ge(probability_ == "sigmoid" ? 0.0 : 0.5).to(torch::kFloat32);
  } else if (kind_ == PredictionKind::kProbabilities) {
    if (probability_ == "softmax") {
      out = torch::softmax(out, 1);
    } else if (probability_ == "exp") {
      out = out.exp();
    } else if (probability_ == "sigmoid") {
      out = torch::sigmoid(out);
    }
  }
  torch::Tensor values = out.to(torch::kCPU, torch::kFloat32).contiguous();
  const float* v = values.data_ptr<float>();
  const int64_t cols = values.size(1);
  char buf[32];
  for (int64_t i = 0; i < rows; ++i) {
    text_.clear();
    for (int64_t j = 0; j < cols; ++j) {
      if (j) text_ += ',';
      auto end = std::to_chars(buf, buf + sizeof buf, v[i * cols + j]).ptr;
      text_.append(buf, end - buf);
    }
    emit(i, text_);
  }
}

void Predictor::PredictInBatches(const torch::Tensor& features, int64_t batch_size,
                                 const std::function<void(int64_t, std::string_view)>& emit) {
  const int64_t rows = features.size(0);
  for (int64_t start = 0; start < rows; start += batch_size) {
    const int64_t n = std::min(batch_size, rows - start);
    Predict(features.narrow(0, start, n),
            [&](int64_t i, std::string_view text) { emit(start + i, text); });
  }
}

}  // namespace sparktorch
