// The trainer's flat gradient buffer and its all-reduce across ranks: the parameters as views
// of one buffer, the gradients moved into another weighted by the step's rows, summed in one
// call after backward or in buckets while it runs (core/train/gradient_buckets.h).
#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include "core/train/trainer.h"
#include "formats/error.h"

namespace sparktorch {

void Trainer::StartBuckets() {
  if (options_.overlap_bucket_elements <= 0) return;
  if (!device_.is_cpu() || !comm_.threads_allowed()) {
    spdlog::info("the gradients' all-reduce follows the backward pass: {}",
                 device_.is_cpu() ? "this MPI allows no second thread"
                                  : "overlapping it is for training on the CPU");
    return;
  }
  std::vector<int64_t> sizes;
  for (const torch::Tensor& p : params_) sizes.push_back(p.numel());
  buckets_ = std::make_unique<GradientBuckets>(comm_, flat_grads_, sizes, options_.allreduce_dtype,
                                               options_.overlap_bucket_elements);
  for (size_t i = 0; i < params_.size(); ++i) {
    if (!params_[i].requires_grad()) continue;  // frozen: zeros after the backward pass
    const unsigned handle = params_[i].register_hook([this, i](const torch::Tensor& grad) {
      torch::mul_out(grad_views_[i], grad, step_weight_);
      buckets_->Ready(i);
    });
    hooks_on_.emplace_back(i, handle);
  }
  spdlog::debug("the gradients' all-reduce in {} bucket(s), overlapping the backward pass",
                buckets_->buckets());
}

void Trainer::StopBuckets() {
  for (const auto& [i, handle] : hooks_on_) params_[i].remove_hook(handle);
  hooks_on_.clear();
  buckets_.reset();
}

void Trainer::BeginBuckets(int64_t rows) {
  step_weight_ = torch::scalar_tensor(static_cast<float>(rows));
  flat_grads_[flat_grads_.numel() - 1].fill_(static_cast<double>(rows));
  buckets_->Begin();
}

void Trainer::Flatten() {
  int64_t total = 0;
  for (const torch::Tensor& p : params_) {
    if (p.scalar_type() != torch::kFloat || p.device() != device_) {
      throw ModelError("synchronous training needs float32 parameters on " + device_.str() +
                       "; this model has a " + std::string(c10::toString(p.scalar_type())) +
                       " parameter on " + p.device().str());
    }
    total += p.numel();
  }
  auto options = torch::TensorOptions().dtype(torch::kFloat).device(device_);
  flat_params_ = torch::empty({total}, options);
  flat_grads_ = torch::zeros({total + 1}, options);
  int64_t offset = 0;
  for (torch::Tensor& p : params_) {
    const int64_t n = p.numel();
    torch::NoGradGuard no_grad;
    flat_params_.narrow(0, offset, n).copy_(p.reshape({-1}));
    p.set_data(flat_params_.narrow(0, offset, n).view(p.sizes()));
    // from_blob, not a view: the optimizers' zero_grad() detaches gradients, which a view refuses.
    grad_views_.push_back(torch::from_blob(flat_grads_.data_ptr<float>() + offset, p.sizes(), options));
    p.mutable_grad() = grad_views_.back();
    offset += n;
  }
  if (!device_.is_cpu()) host_grads_ = torch::empty({total + 1}, torch::kFloat);
  if (options_.allreduce_dtype != at::kFloat) {
    allreduce16_ = std::make_unique<Allreduce16>(comm_, options_.allreduce_dtype);
  }
  StartBuckets();

  // Every rank starts from rank 0's weights (and buffers, such as batch norm's running means).
  torch::Tensor host = device_.is_cpu() ? flat_params_ : flat_params_.cpu();
  comm_.Broadcast(host.data_ptr(), host.numel() * sizeof(float), 0);
  if (!device_.is_cpu()) flat_params_.copy_(host);
  for (torch::Tensor buffer : module_.buffers()) {
    torch::Tensor b = buffer.cpu().contiguous();
    comm_.Broadcast(b.data_ptr(), b.numel() * b.element_size(), 0);
    torch::NoGradGuard no_grad;
    buffer.copy_(b);
  }
}

void Trainer::Unflatten() {
  if (!flat_params_.defined()) return;
  StopBuckets();
  torch::NoGradGuard no_grad;
  for (torch::Tensor& p : params_) {
    p.set_data(p.detach().clone());
    p.mutable_grad() = torch::Tensor();
  }
  flat_params_ = torch::Tensor();
  flat_grads_ = torch::Tensor();
  grad_views_.clear();
}

void Trainer::ZeroGradients() {
  // No gradient at all, as torch's zero_grad(set_to_none=True): backward then hands each
  // parameter the gradient it computed instead of adding it to a zeroed one (with a flat buffer,
  // AverageGradients moves it there in the pass that weights it by the step's rows). A parameter
  // the step's forward pass did not use keeps none, and the optimizers skip it, as torch's do.
  for (torch::Tensor& p : params_) p.mutable_grad() = torch::Tensor();
}

double Trainer::AverageGradients(int64_t rows) {
  const int64_t total = flat_grads_.numel() - 1;
  torch::Tensor grads = flat_grads_.narrow(0, 0, total);
  if (buckets_) {
    // The hooks moved every gradient backward computed; the rest are zeros (no rows this step,
    // or a parameter the forward pass did not use).
    for (size_t i = 0; i < params_.size(); ++i) {
      if (!buckets_->ready(i)) {
        grad_views_[i].zero_();
        buckets_->Ready(i);
      }
      params_[i].mutable_grad() = grad_views_[i];
    }
    buckets_->Finish();
    const double all_rows = flat_grads_.data_ptr<float>()[total];
    if (all_rows > 0) grads.div_(all_rows);
    return all_rows;
  }
  // Each rank's gradient is the mean over its rows; the rows-weighted sum over ranks divided by
  // all the rows is the mean over the step's global batch, however unevenly it is split. A
  // parameter without a gradient (no rows this step, or unused by the forward pass) adds zeros.
  const torch::Tensor weight = torch::scalar_tensor(static_cast<float>(rows));  // on the CPU, as a scalar
  for (size_t i = 0; i < params_.size(); ++i) {
    torch::Tensor& view = grad_views_[i];
    const torch::Tensor& grad = params_[i].grad();
    if (grad.defined() && rows > 0) {
      torch::mul_out(view, grad, weight);
    } else {
      view.zero_();
    }
    params_[i].mutable_grad() = view;
  }
  flat_grads_[total].fill_(static_cast<double>(rows));
  torch::Tensor host = device_.is_cpu() ? flat_grads_ : host_grads_.copy_(flat_grads_);
  if (allreduce16_) {
    allreduce16_->Sum(host.narrow(0, 0, total));
    comm_.AllreduceSum(host.data_ptr<float>() + total, 1);  // the rows, exactly
  } else {
    comm_.AllreduceSum(host.data_ptr<float>(), host.numel());
  }
  if (!device_.is_cpu()) flat_grads_.copy_(host);
  const double all_rows = host.data_ptr<float>()[total];
  if (all_rows > 0) grads.div_(all_rows);
  return all_rows;
}

}  // namespace sparktorch
