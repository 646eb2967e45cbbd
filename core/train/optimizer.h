#ifndef SPARKTORCH_CORE_TRAIN_OPTIMIZER_H_
#define SPARKTORCH_CORE_TRAIN_OPTIMIZER_H_

#include <memory>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/optim/optimizer.h>

namespace sparktorch {

// Completes an optimizer spec ("adam" or {"type": "adam", "lr": 0.001, ...}) with every option
// spelled out at torch.optim's defaults, after checking every field. Known: sgd (lr, momentum,
// dampening, weight_decay, nesterov), adam and adamw (lr, betas, eps, weight_decay, amsgrad),
// rmsprop (lr, alpha, eps, weight_decay, momentum, centered), adagrad (lr, lr_decay,
// weight_decay, initial_accumulator_value, eps). Throws SpecError naming the field at fault.
nlohmann::json CompleteOptimizerSpec(const nlohmann::json& spec);

// Makes the optimizer over `params` from a spec as CompleteOptimizerSpec returns it.
std::unique_ptr<torch::optim::Optimizer> MakeOptimizer(const nlohmann::json& spec,
                                                       const std::vector<torch::Tensor>& params);

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_TRAIN_OPTIMIZER_H_
