#ifndef SPARKTORCH_CORE_TRAIN_ADAM_KERNEL_H_
#define SPARKTORCH_CORE_TRAIN_ADAM_KERNEL_H_

#include <cstdint>

namespace sparktorch {

// The float32 constants of one Adam or AdamW step, computed in double and rounded once, as
// torch.optim's scalars reach its float kernels.
struct AdamStepConstants {
  float beta1 = 0;
  float beta2 = 0;
  float one_minus_beta1 = 0;
  float one_minus_beta2 = 0;
  float sqrt_bias_correction2 = 0;  // sqrt(1 - beta2^step)
  float eps = 0;
  float neg_step_size = 0;          // -lr / (1 - beta1^step)
  float l2 = 0;                     // Adam's weight_decay, added to the gradient (0: none)
  float decay = 1;                  // AdamW's 1 - lr * weight_decay, applied to the weights first
};

AdamStepConstants AdamConstants(double lr, double beta1, double beta2, double eps, int64_t step,
                                double adam_weight_decay, double adamw_weight_decay);

// One step of Adam (torch.optim.Adam, amsgrad off) over n float32 values, in one pass:
//   p *= decay; g2 = g + l2 * p; m = beta1 m + (1 - beta1) g2; v = beta2 v + (1 - beta2) g2 g2;
//   p += neg_step_size * m / (sqrt(v) / sqrt_bias_correction2 + eps).
// torch.optim's operations in its order, each rounded to float, no fused multiply-add: every
// processor gives the same bits, so ranks on different machines keep equal weights.
void AdamUpdate(float* p, const float* g, float* m, float* v, int64_t n, const AdamStepConstants& c);

}  // namespace sparktorch

#endif  // SPARKTORCH_CORE_TRAIN_ADAM_KERNEL_H_
