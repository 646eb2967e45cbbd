#ifndef SPARKTORCH_CORE_TRAIN_FEATURE_SCALE_H_
#define SPARKTORCH_CORE_TRAIN_FEATURE_SCALE_H_

#include <string>

#include <ATen/core/Tensor.h>
#include <nlohmann/json.hpp>

namespace sparktorch {

// How far the features a hogwild job trains on are from unit scale (issue 25). Features in the
// hundreds (Fashion-MNIST pixels as 0-255, as SparkTorch's own example feeds them) make each
// update move a network's outputs hundreds of times further than features in [0, 1] do, so a
// gradient computed on weights one update old (hogwild's, with 2 workers most are) is far off
// the weights it is applied to. Measured with tests/bench/hogwild_raw_bench.sh (10,000 rows, 2
// workers or ranks, MLP, Adam, batch 64, 3 epochs): test accuracy 0.73-0.82 over 39 hogwild runs
// on the raw pixels (median 0.79), 0.78-0.84 over 27 on the pixels / 255 (median 0.82); sync
// 0.77-0.83 on either (8 seeds raw, 6 scaled; medians 0.81, 0.82). Neither --lock (0.75-0.82:
// batch-64 steps on raw pixels are erratic too) nor a learning rate divided by the staleness
// (0.71-0.81, and worse scaled) makes raw pixels dependable. sparktorch does not rescale rows
// itself (a model trained on scaled rows must be given scaled rows to predict): it says so, and
// how to.
struct FeatureScale {
  double values = 0;       // feature values measured
  double sum_squares = 0;  // of those values
  double max_abs = 0;      // the largest |value|

  double Rms() const;  // root mean square; 0 without values
};

// Features whose root mean square is above this are far from unit scale: an order of magnitude
// above standardised features (1) and pixels in [0, 1] (0.45 for Fashion-MNIST); raw pixels are
// at 116.
constexpr double kMaxFeatureRms = 10;

// The scale of `features` (rows of numbers, on any device); zero when undefined or empty.
FeatureScale MeasureFeatureScale(const at::Tensor& features);

// Whether a JSON spec model takes its rows' features as they are into weights: false when its
// first layer (after reshape and flatten) normalises them (batch_norm1d, batch_norm2d,
// layer_norm) or when it has an embedding, whose inputs are indices rather than magnitudes.
bool SpecTakesFeaturesAsTheyAre(const nlohmann::json& spec);

// The warning for `where` (the rows it is about, "stdin", "worker 1's rows") when `scale` is far
// from unit scale: what that does to hogwild training and what to do. Empty when it is not.
std::string UnscaledFeaturesWarning(const FeatureScale& scale, const std::string& where);

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_TRAIN_FEATURE_SCALE_H_
