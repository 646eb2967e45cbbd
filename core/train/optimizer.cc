#include "core/train/optimizer.h"

#include <limits>

#include <torch/torch.h>

#include "core/model/spec_fields.h"
#include "core/train/fused_adam.h"
#include "formats/error.h"

namespace sparktorch {

using nlohmann::json;

json CompleteOptimizerSpec(const json& spec) {
  std::string type = SpecType(spec, "optimizer");
  static const json kNoFields = json::object();
  SpecFields f(spec.is_object() ? spec : kNoFields, "optimizer (" + type + ")");
  constexpr double kInf = std::numeric_limits<double>::infinity();
  json out = {{"type", type}};
  if (type == "sgd") {
    out["lr"] = f.Number("lr", 0.01, 0, kInf);
    out["momentum"] = f.Number("momentum", 0, 0, kInf);
    out["dampening"] = f.Number("dampening", 0, 0, kInf);
    out["weight_decay"] = f.Number("weight_decay", 0, 0, kInf);
    out["nesterov"] = f.Bool("nesterov", false);
    if (out["nesterov"].get<bool>() &&
        (out["momentum"].get<double>() <= 0 || out["dampening"].get<double>() != 0)) {
      f.Fail("nesterov", "needs a momentum above 0 and zero dampening");
    }
  } else if (type == "adam" || type == "adamw") {
    out["lr"] = f.Number("lr", 0.001, 0, kInf);
    out["betas"] = f.NumberList("betas", 2, 0, 1, {0.9, 0.999});
    out["eps"] = f.Number("eps", 1e-8, 0, kInf);
    out["weight_decay"] = f.Number("weight_decay", type == "adamw" ? 0.01 : 0.0, 0, kInf);
    out["amsgrad"] = f.Bool("amsgrad", false);
  } else if (type == "rmsprop") {
    out["lr"] = f.Number("lr", 0.01, 0, kInf);
    out["alpha"] = f.Number("alpha", 0.99, 0, kInf);
    out["eps"] = f.Number("eps", 1e-8, 0, kInf);
    out["weight_decay"] = f.Number("weight_decay", 0, 0, kInf);
    out["momentum"] = f.Number("momentum", 0, 0, kInf);
    out["centered"] = f.Bool("centered", false);
  } else if (type == "adagrad") {
    out["lr"] = f.Number("lr", 0.01, 0, kInf);
    out["lr_decay"] = f.Number("lr_decay", 0, 0, kInf);
    out["weight_decay"] = f.Number("weight_decay", 0, 0, kInf);
    out["initial_accumulator_value"] = f.Number("initial_accumulator_value", 0, 0, kInf);
    out["eps"] = f.Number("eps", 1e-10, 0, kInf);
  } else {
    throw SpecError("optimizer: unknown type \"" + type +
                    "\"; known: sgd, adam, adamw, rmsprop, adagrad");
  }
  f.Done();
  return out;
}

std::unique_ptr<torch::optim::Optimizer> MakeOptimizer(const json& spec,
                                                       const std::vector<torch::Tensor>& params) {
  const std::string type = spec.at("type").get<std::string>();
  auto num = [&](const char* key) { return spec.at(key).get<double>(); };
  if (type == "sgd") {
    return std::make_unique<torch::optim::SGD>(
        params, torch::optim::SGDOptions(num("lr"))
                    .momentum(num("momentum"))
                    .dampening(num("dampening"))
                    .weight_decay(num("weight_decay"))
                    .nesterov(spec.at("nesterov").get<bool>()));
  }
  if (type == "adam" || type == "adamw") {
    auto betas = std::make_tuple(spec.at("betas")[0].get<double>(), spec.at("betas")[1].get<double>());
    if (type == "adam") {
      return std::make_unique<FusedAdam>(
          params, torch::optim::AdamOptions(num("lr"))
                      .betas(betas)
                      .eps(num("eps"))
                      .weight_decay(num("weight_decay"))
                      .amsgrad(spec.at("amsgrad").get<bool>()));
    }
    return std::make_unique<FusedAdamW>(
        params, torch::optim::AdamWOptions(num("lr"))
                    .betas(betas)
                    .eps(num("eps"))
                    .weight_decay(num("weight_decay"))
                    .amsgrad(spec.at("amsgrad").get<bool>()));
  }
  if (type == "rmsprop") {
    return std::make_unique<torch::optim::RMSprop>(
        params, torch::optim::RMSpropOptions(num("lr"))
                    .alpha(num("alpha"))
                    .eps(num("eps"))
                    .weight_decay(num("weight_decay"))
                    .momentum(num("momentum"))
                    .centered(spec.at("centered").get<bool>()));
  }
  if (type == "adagrad") {
    return std::make_unique<torch::optim::Adagrad>(
        params, torch::optim::AdagradOptions(num("lr"))
                    .lr_decay(num("lr_decay"))
                    .weight_decay(num("weight_decay"))
                    .initial_accumulator_value(num("initial_accumulator_value"))
                    .eps(num("eps")));
  }
  throw SpecError("optimizer: unknown type \"" + type + "\"");
}

}  // namespace sparktorch
