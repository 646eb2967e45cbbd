#ifndef SPARKTORCH_FORMATS_PREDICTION_KIND_H_
#define SPARKTORCH_FORMATS_PREDICTION_KIND_H_

#include "formats/enum_names.h"

namespace sparktorch {

// What one prediction line holds (a model's manifest stores its default by name):
//   kArgmax        the index of the largest output (a class), SparkTorch's default;
//   kVector        every output, comma-separated (SparkTorch's useVectorOut; a regression's value);
//   kProbabilities the outputs turned into probabilities for the model's loss (softmax after
//                  cross_entropy, exp after nll's log-probabilities, sigmoid after bce_with_logits);
//   kClass         the class: for bce and bce_with_logits 1 or 0 per output (its probability at
//                  least 0.5 or not), for cross_entropy and nll the argmax.
enum class PredictionKind { kArgmax, kVector, kProbabilities, kClass };

// "argmax", "vector", "probabilities", "class".
inline constexpr Named<PredictionKind> kPredictionKindNames[] = {
    {PredictionKind::kArgmax, "argmax"},
    {PredictionKind::kVector, "vector"},
    {PredictionKind::kProbabilities, "probabilities"},
    {PredictionKind::kClass, "class"},
};

}  // namespace sparktorch

#endif  // SPARKTORCH_FORMATS_PREDICTION_KIND_H_
