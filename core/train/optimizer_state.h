#ifndef SPARKTORCH_CORE_TRAIN_OPTIMIZER_STATE_H_
#define SPARKTORCH_CORE_TRAIN_OPTIMIZER_STATE_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/optim/optimizer.h>

namespace sparktorch {

// An optimizer's state as the bytes of a file that Python's torch.load reads (torch::pickle_save's
// archive, without TorchScript's type tags, so that torch.load's weights_only=True reads it too)
// into what torch.optim's state_dict() holds, so that `opt.load_state_dict(torch.load(f))` works
// for the same optimizer over the model's parameters():
//   {"state": {i: {"step": tensor(n.), "exp_avg": ..., "exp_avg_sq": ...}, ...},
//    "param_groups": [{"lr": ..., "betas": (..., ...), ..., "params": [0, 1, ...]}]}
// The tensors are torch.optim's per type: sgd momentum_buffer; adam and adamw step, exp_avg,
// exp_avg_sq (max_exp_avg_sq with amsgrad); rmsprop step, square_avg (momentum_buffer,
// grad_avg); adagrad step, sum. `spec`: the optimizer's complete spec; `params` in the order of
// the module's parameters(). A parameter without state (never stepped) has no entry.
std::string SaveOptimizerState(torch::optim::Optimizer& optimizer, const nlohmann::json& spec,
                               const std::vector<torch::Tensor>& params);

// Gives `optimizer` (made from `spec` over `params`) the state SaveOptimizerState wrote, or that
// torch.save(opt.state_dict()) wrote for the same torch.optim type, with a newer LibTorch (2.15):
// 1.13's unpickler lacks the APPEND opcode that Python's pickle writes for a list of one item
// (param_groups) and refuses it ("Unknown opcode for unpickling at 0x61"). The param_groups'
// options are not taken (the spec and flags decide them). Throws ModelError naming `name` when
// the bytes are not such a state, or a tensor does not fit its parameter.
void LoadOptimizerState(torch::optim::Optimizer& optimizer, const nlohmann::json& spec,
                        const std::vector<torch::Tensor>& params, const std::string& bytes,
                        const std::string& name);

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_TRAIN_OPTIMIZER_STATE_H_
