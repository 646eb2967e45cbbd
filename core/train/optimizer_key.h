#ifndef SPARKTORCH_CORE_TRAIN_OPTIMIZER_KEY_H_
#define SPARKTORCH_CORE_TRAIN_OPTIMIZER_KEY_H_

#include <sstream>
#include <string>
#include <type_traits>
#include <utility>

#include <torch/optim/optimizer.h>

namespace sparktorch {

// The key of a parameter's entry in Optimizer::state(): its TensorImpl's address, as text up to
// LibTorch 2.1 and as the pointer itself from 2.2 on (the map's key type says which).
using OptimizerStateKey =
    std::decay_t<decltype(std::declval<torch::optim::Optimizer&>().state())>::key_type;

template <typename K = OptimizerStateKey>
K StateKeyOf(const torch::Tensor& p) {
  if constexpr (std::is_same_v<K, std::string>) {
    std::ostringstream text;
    text << p.unsafeGetTensorImpl();
    return text.str();
  } else {
    return p.unsafeGetTensorImpl();
  }
}

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_TRAIN_OPTIMIZER_KEY_H_
