// Multi-tensor ops: one dispatch over a list of tensors (gradient clipping's global norm, the
// fused SGD and Adam/AdamW updates).
#pragma once

#include <vector>

#include "ingot/tensor/tensor.h"

namespace ingot {

/// sqrt of the sum of squares of every element of every tensor, as a float32 0-dim tensor.
Tensor global_norm(const std::vector<Tensor>& tensors);

/// torch.optim.SGD's hyper-parameters for one update.
struct SgdOptions {
  double lr = 0.01;
  double momentum = 0.0;
  double dampening = 0.0;
  double weight_decay = 0.0;
  bool nesterov = false;
  bool first_step = false;  ///< momentum buffers start as the gradient (torch's first step)
};

/// Updates params (and momentum bufs) in place. bufs may be empty when momentum is 0: the op then
/// gets 0-size placeholders, which backends never read.
void sgd_update(const std::vector<Tensor>& params, const std::vector<Tensor>& grads, const std::vector<Tensor>& bufs,
                const SgdOptions& options);

/// torch.optim.Adam's (decoupled = false) or AdamW's (decoupled = true) hyper-parameters for one
/// update; `step` is the 1-based number of this update (bias corrections 1 - beta^step).
struct AdamUpdateOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;
  int64_t step = 1;
  bool decoupled = false;
  bool amsgrad = false;
};

/// Updates params, exp_avgs and exp_avg_sqs (and max_exp_avg_sqs when amsgrad) in place, in one
/// ADAM_UPDATE call. Every list has one tensor per param (max_exp_avg_sqs empty unless amsgrad).
void adam_update(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                 const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                 const std::vector<Tensor>& max_exp_avg_sqs, const AdamUpdateOptions& options);

}  // namespace ingot
