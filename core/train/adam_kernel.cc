#include "core/train/adam_kernel.h"

#include <cmath>

// Built with -O3 -fno-math-errno -ffp-contract=off (core/CMakeLists.txt): vectorised sqrt and
// division, never a contracted multiply-add. The AVX2 clone takes 8 floats at a time; either
// clone computes the same IEEE operations on each element.

namespace sparktorch {

AdamStepConstants AdamConstants(double lr, double beta1, double beta2, double eps, int64_t step,
                                double adam_weight_decay, double adamw_weight_decay) {
  const double bias_correction1 = 1 - std::pow(beta1, static_cast<double>(step));
  const double bias_correction2 = 1 - std::pow(beta2, static_cast<double>(step));
  AdamStepConstants c;
  c.beta1 = static_cast<float>(beta1);
  c.beta2 = static_cast<float>(beta2);
  c.one_minus_beta1 = static_cast<float>(1 - beta1);
  c.one_minus_beta2 = static_cast<float>(1 - beta2);
  c.sqrt_bias_correction2 = static_cast<float>(std::sqrt(bias_correction2));
  c.eps = static_cast<float>(eps);
  c.neg_step_size = static_cast<float>(-(lr / bias_correction1));
  c.l2 = static_cast<float>(adam_weight_decay);
  c.decay = static_cast<float>(1 - lr * adamw_weight_decay);
  return c;
}

__attribute__((target_clones("avx2", "default")))
void AdamUpdate(float* __restrict p, const float* __restrict g, float* __restrict m,
                float* __restrict v, int64_t n, const AdamStepConstants& constants) {
  const AdamStepConstants c = constants;
  const bool decoupled = c.decay != 1.0f;
  const bool l2 = c.l2 != 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    float w = p[i];
    if (decoupled) w = w * c.decay;
    float grad = g[i];
    if (l2) grad = grad + c.l2 * w;
    const float mi = m[i] * c.beta1 + c.one_minus_beta1 * grad;
    const float vi = v[i] * c.beta2 + c.one_minus_beta2 * grad * grad;
    m[i] = mi;
    v[i] = vi;
    const float denom = std::sqrt(vi) / c.sqrt_bias_correction2 + c.eps;
    p[i] = w + c.neg_step_size * (mi / denom);
  }
}

}  // namespace sparktorch
