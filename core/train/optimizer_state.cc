#include "core/train/optimizer_state.h"

#include <map>
#include <optional>
#include <string>
#include <utility>

#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/export.h>
#include <torch/csrc/jit/serialization/pickler.h>
#include <torch/serialize.h>
#include <torch/torch.h>

#include "core/model/shape.h"
#include "core/train/optimizer_key.h"
#include "formats/error.h"

namespace sparktorch {

using nlohmann::json;

namespace {

// One parameter's state by torch.optim's names: the step count and the tensors.
struct NamedState {
  std::optional<int64_t> step;
  std::map<std::string, torch::Tensor> tensors;
};

// Adam's and AdamW's states have the same fields under two types.
template <typename State, typename Put>
void NameAdam(State& a, const Put& put, NamedState* n) {
  n->step = a.step();
  put("exp_avg", a.exp_avg());
  put("exp_avg_sq", a.exp_avg_sq());
  put("max_exp_avg_sq", a.max_exp_avg_sq());
}

template <typename State, typename Get>
std::unique_ptr<torch::optim::OptimizerParamState> AdamFromNamed(int64_t step, const Get& get) {
  auto s = std::make_unique<State>();
  s->step(step).exp_avg(get("exp_avg")).exp_avg_sq(get("exp_avg_sq")).max_exp_avg_sq(get("max_exp_avg_sq"));
  return s;
}

// The state of one parameter by name, from LibTorch's param state of the optimizer's type.
NamedState Named(const std::string& type, torch::optim::OptimizerParamState& s) {
  NamedState n;
  auto put = [&](const char* name, const torch::Tensor& t) {
    if (t.defined()) n.tensors[name] = t.detach().cpu().clone();
  };
  if (type == "sgd") {
    put("momentum_buffer", static_cast<torch::optim::SGDParamState&>(s).momentum_buffer());
  } else if (type == "adam") {
    NameAdam(static_cast<torch::optim::AdamParamState&>(s), put, &n);
  } else if (type == "adamw") {
    NameAdam(static_cast<torch::optim::AdamWParamState&>(s), put, &n);
  } else if (type == "rmsprop") {
    auto& r = static_cast<torch::optim::RMSpropParamState&>(s);
    n.step = r.step();
    put("square_avg", r.square_avg());
    put("momentum_buffer", r.momentum_buffer());
    put("grad_avg", r.grad_avg());
  } else if (type == "adagrad") {
    auto& g = static_cast<torch::optim::AdagradParamState&>(s);
    n.step = g.step();
    put("sum", g.sum());
  }
  return n;
}

// LibTorch's param state of the optimizer's type from the state by name; tensors on `device`.
std::unique_ptr<torch::optim::OptimizerParamState> FromNamed(const std::string& type, const NamedState& n,
                                                             c10::Device device) {
  auto get = [&](const char* name) {
    auto it = n.tensors.find(name);
    return it == n.tensors.end() ? torch::Tensor() : it->second.to(device).clone();
  };
  const int64_t step = n.step.value_or(0);
  if (type == "sgd") {
    auto s = std::make_unique<torch::optim::SGDParamState>();
    s->momentum_buffer(get("momentum_buffer"));
    return s;
  }
  if (type == "adam") return AdamFromNamed<torch::optim::AdamParamState>(step, get);
  if (type == "adamw") return AdamFromNamed<torch::optim::AdamWParamState>(step, get);
  if (type == "rmsprop") {
    auto s = std::make_unique<torch::optim::RMSpropParamState>();
    s->step(step).square_avg(get("square_avg")).momentum_buffer(get("momentum_buffer")).grad_avg(get("grad_avg"));
    return s;
  }
  auto s = std::make_unique<torch::optim::AdagradParamState>();
  s->step(step).sum(get("sum"));
  return s;
}

// The tensors each type needs for a parameter it has stepped.
std::vector<std::string> Required(const json& spec) {
  const std::string type = spec.at("type").get<std::string>();
  if (type == "sgd") return spec.at("momentum").get<double>() != 0 ? std::vector<std::string>{"momentum_buffer"} : std::vector<std::string>{};
  if (type == "adam" || type == "adamw") {
    std::vector<std::string> names = {"exp_avg", "exp_avg_sq"};
    if (spec.at("amsgrad").get<bool>()) names.push_back("max_exp_avg_sq");
    return names;
  }
  if (type == "rmsprop") {
    std::vector<std::string> names = {"square_avg"};
    if (spec.at("momentum").get<double>() > 0) names.push_back("momentum_buffer");
    if (spec.at("centered").get<bool>()) names.push_back("grad_avg");
    return names;
  }
  return {"sum"};
}

// torch.optim's param_groups[0] for the spec, with the optimizer's current lr.
c10::impl::GenericDict Group(const json& spec, double lr, size_t num_params) {
  c10::impl::GenericDict group(c10::StringType::get(), c10::AnyType::get());
  for (auto it = spec.begin(); it != spec.end(); ++it) {
    if (it.key() == "type") continue;
    const json& v = it.value();
    if (v.is_boolean()) {
      group.insert(it.key(), v.get<bool>());
    } else if (v.is_array()) {
      std::vector<c10::IValue> items;
      for (const json& x : v) items.emplace_back(x.get<double>());
      group.insert(it.key(), c10::ivalue::Tuple::create(std::move(items)));
    } else {
      group.insert(it.key(), v.get<double>());
    }
  }
  group.insert_or_assign("initial_lr", spec.at("lr").get<double>());
  group.insert_or_assign("lr", lr);
  // A list of Any, not of int: a c10::List<int64_t> pickles through build_intlist (see Pickle).
  c10::List<c10::IValue> indices(c10::AnyType::get());
  for (size_t i = 0; i < num_params; ++i) indices.push_back(static_cast<int64_t>(i));
  group.insert("params", indices);
  return group;
}

// torch::pickle_save's archive, less its TorchScript type tags: pickle_save wraps every dict and
// list in torch.jit._pickle.restore_type_tag, a global that torch.load(weights_only=True), the
// default since PyTorch 2.6, refuses (as it does build_intlist, for a list of ints). Untagged,
// the pickle holds only what Python's torch.save(opt.state_dict()) holds: dicts, lists, tuples,
// scalars and tensors. torch::pickle_load reads either.
std::string Pickle(const c10::IValue& value) {
  std::string pickle;
  torch::jit::Pickler pickler([&](const char* data, size_t size) { pickle.append(data, size); },
                              /*tensor_table=*/nullptr, /*type_renamer=*/nullptr,
                              /*memoized_class_types=*/nullptr, /*get_tensor_id=*/nullptr,
                              /*tag_aggregates=*/false);
  pickler.protocol();
  pickler.pushIValue(value);
  pickler.stop();
  std::string archive;
  caffe2::serialize::PyTorchStreamWriter writer([&](const void* data, size_t size) {
    archive.append(static_cast<const char*>(data), size);
    return size;
  });
  torch::jit::writeArchiveAndTensors("data", pickle.data(), pickle.size(), pickler.tensorData(),
                                     writer);
  writer.writeEndOfFile();
  return archive;
}

}  // namespace

std::string SaveOptimizerState(torch::optim::Optimizer& optimizer, const json& spec,
                               const std::vector<torch::Tensor>& params) {
  const std::string type = spec.at("type").get<std::string>();
  c10::impl::GenericDict state(c10::IntType::get(), c10::AnyType::get());
  for (size_t i = 0; i < params.size(); ++i) {
    auto it = optimizer.state().find(StateKeyOf(params[i]));
    if (it == optimizer.state().end()) continue;
    const NamedState named = Named(type, *it->second);
    c10::impl::GenericDict entry(c10::StringType::get(), c10::AnyType::get());
    // torch.optim 1.13 keeps the step as a float tensor.
    if (named.step) entry.insert("step", torch::tensor(static_cast<float>(*named.step)));
    for (const auto& [name, tensor] : named.tensors) entry.insert(name, tensor);
    state.insert(static_cast<int64_t>(i), entry);
  }
  c10::List<c10::IValue> groups(c10::AnyType::get());
  groups.push_back(Group(spec, optimizer.param_groups().at(0).options().get_lr(), params.size()));
  c10::impl::GenericDict root(c10::StringType::get(), c10::AnyType::get());
  root.insert("state", state);
  root.insert("param_groups", groups);
  return Pickle(root);
}

void LoadOptimizerState(torch::optim::Optimizer& optimizer, const json& spec,
                        const std::vector<torch::Tensor>& params, const std::string& bytes,
                        const std::string& name) {
  c10::IValue root;
  try {
    root = torch::pickle_load(std::vector<char>(bytes.begin(), bytes.end()));
  } catch (const c10::Error& e) {
    throw ModelError(name + ": not an optimizer state torch.load reads: " + e.what_without_backtrace());
  }
  if (!root.isGenericDict() || !root.toGenericDict().contains("state")) {
    throw ModelError(name + ": not an optimizer state_dict (no \"state\")");
  }
  const c10::IValue state_value = root.toGenericDict().at("state");
  if (!state_value.isGenericDict()) throw ModelError(name + ": \"state\" is not a dict");
  const std::string type = spec.at("type").get<std::string>();
  const std::vector<std::string> required = Required(spec);
  for (const auto& item : state_value.toGenericDict()) {
    if (!item.key().isInt() || item.key().toInt() < 0 ||
        item.key().toInt() >= static_cast<int64_t>(params.size()) || !item.value().isGenericDict()) {
      throw ModelError(name + ": a state entry for no parameter of this model (" +
                       std::to_string(params.size()) + " parameters)");
    }
    const int64_t index = item.key().toInt();
    const torch::Tensor& param = params[static_cast<size_t>(index)];
    NamedState named;
    for (const auto& field : item.value().toGenericDict()) {
      const std::string field_name = field.key().toStringRef();
      const c10::IValue& v = field.value();
      if (field_name == "step") {
        named.step = v.isTensor() ? static_cast<int64_t>(v.toTensor().item<double>())
                                  : v.isInt() ? v.toInt() : static_cast<int64_t>(v.toDouble());
      } else if (v.isTensor()) {
        if (v.toTensor().sizes() != param.sizes()) {
          throw ModelError(name + ": the state " + field_name + " of parameter " + std::to_string(index) +
                           " has shape [" + ShapeText(v.toTensor().sizes().vec()) + "], the parameter [" +
                           ShapeText(param.sizes().vec()) + "]");
        }
        named.tensors[field_name] = v.toTensor();
      }
    }
    for (const std::string& r : required) {
      if (!named.tensors.count(r)) {
        throw ModelError(name + ": parameter " + std::to_string(index) + " has no \"" + r +
                         "\", which " + type + " keeps");
      }
    }
    optimizer.state()[StateKeyOf(param)] = FromNamed(type, named, param.device());
  }
}

}  // namespace sparktorch
