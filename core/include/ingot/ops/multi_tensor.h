// Multi-tensor ops: one dispatch over a list of tensors (gradient clipping's global norm, the
// fused SGD and Adam/AdamW updates).
#pragma once

#include <vector>

#include "ingot/plugin/ingot_plugin.h"
#include "ingot/tensor/tensor.h"

namespace ingot {

/// sqrt of the sum of squares of every element of every tensor, as a float32 0-dim tensor.
Tensor global_norm(const std::vector<Tensor>& tensors);

/// Updates params (and momentum bufs) in place with one SGD_UPDATE (torch.optim.SGD; `attr` as
/// ingot_plugin.h documents it, struct_size and abi_minor filled in here). bufs may be empty when
/// momentum is 0: the op then gets 0-size placeholders, which backends never read.
/// With `hyper` (a contiguous float64 [2] tensor [lr, step] on the params' device) the call is
/// SGD_UPDATE_CAPTURABLE, which reads lr from it and not from `attr`: a captured graph that replays
/// the call uses whatever the tensor holds then (train.compile's optimizer step).
void sgd_update(const std::vector<Tensor>& params, const std::vector<Tensor>& grads, const std::vector<Tensor>& bufs,
                ingot_attr_sgd attr, const Tensor& hyper = Tensor());

/// Updates params, exp_avgs and exp_avg_sqs (and max_exp_avg_sqs when amsgrad) in place, in one
/// ADAM_UPDATE call (torch.optim.Adam, or AdamW when `attr.decoupled`; `attr.step` is the 1-based
/// number of this update). Every list has one tensor per param (max_exp_avg_sqs empty unless
/// amsgrad). With `hyper` the call is ADAM_UPDATE_CAPTURABLE: lr and step come from it (as for
/// sgd_update), not from `attr`.
void adam_update(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                 const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                 const std::vector<Tensor>& max_exp_avg_sqs, ingot_attr_adam attr, const Tensor& hyper = Tensor());

}  // namespace ingot
