#include "cli/model_flags.h"

#include <utility>

namespace sparktorch {

void AddModelFlags(CLI::App* c, ModelFlags* f, const ModelFlagsHelp& help) {
  f->model_opt = c->add_option("--model,-m", f->source.model_path, help.model);
  f->train_config_opt = c->add_option("--train-config", f->source.train_config,
                                      "JSON with \"loss\", \"optimizer\" and \"lr_schedule\" for a "
                                      "TorchScript model (default: MODEL.json beside MODEL.pt, if "
                                      "there)");
  if (help.model_group != nullptr) {
    f->model_opt->group(help.model_group);
    f->train_config_opt->group(help.model_group);
  }
  f->lr_opt = c->add_option("--lr", f->lr, "Learning rate (default: the spec's, else the optimizer's)")
                  ->check(CLI::PositiveNumber)
                  ->group(help.training);
  f->optimizer_opt = c->add_option("--optimizer", f->optimizer,
                                   "sgd, adam, adamw, rmsprop or adagrad (default: the spec's, "
                                   "else adam)")
                         ->check(CLI::IsMember({"sgd", "adam", "adamw", "rmsprop", "adagrad"}))
                         ->group(help.training);
  f->lr_schedule_opt =
      c->add_option("--lr-schedule", f->lr_schedule,
                    "step, multistep, exponential, cosine, one_cycle, reduce_on_plateau or none, "
                    "or a JSON object with its options (default: the spec's, else none)")
          ->group(help.training);
  f->loss_opt = c->add_option("--loss", f->loss,
                              "cross_entropy, nll, mse, l1, smooth_l1, bce or bce_with_logits "
                              "(default: the spec's, else cross_entropy)")
                    ->check(CLI::IsMember({"cross_entropy", "nll", "mse", "l1", "smooth_l1",
                                          "bce", "bce_with_logits"}))
                    ->group(help.training);
  f->seed_opt = c->add_option("--seed", f->seed, help.seed)->group(help.training);
  f->output_opt = c->add_option("--output,-o", f->output_path, help.output)->group(help.output_group);
}

ModelSource ToModelSource(const ModelFlags& f, std::string input_shape) {
  ModelSource source = f.source;
  source.input_shape = std::move(input_shape);
  if (f.loss_opt->count()) source.loss = f.loss;
  if (f.optimizer_opt->count()) source.optimizer = f.optimizer;
  if (f.lr_opt->count()) source.lr = f.lr;
  if (f.lr_schedule_opt->count()) source.lr_schedule = f.lr_schedule;
  return source;
}

}  // namespace sparktorch
