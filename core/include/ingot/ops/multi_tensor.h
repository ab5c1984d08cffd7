// Multi-tensor ops: one dispatch over a list of tensors (gradient clipping's global norm, the
// fused SGD update).
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

/// Updates params (and momentum bufs) in place. bufs may be empty when momentum is 0.
void sgd_update(const std::vector<Tensor>& params, const std::vector<Tensor>& grads, const std::vector<Tensor>& bufs,
                const SgdOptions& options);

}  // namespace ingot
