// Autograd hooks on leaves: a function called each time a backward pass has added to a leaf's
// gradient (torch's Tensor.register_post_accumulate_grad_hook). Data parallelism reduces gradient
// buckets from here while the rest of backward still runs.
#pragma once

#include <cstdint>

#include "ingot/autograd/node.h"

namespace ingot::autograd {

/// Registers `hook` on `leaf` (a tensor that requires grad and was not produced by an op); returns
/// an id for remove_post_accumulate_grad_hook. Hooks run in registration order.
uint64_t register_post_accumulate_grad_hook(const Tensor& leaf, PostAccumulateGradHook hook);
/// Removes a hook; a no-op for an unknown id.
void remove_post_accumulate_grad_hook(const Tensor& leaf, uint64_t id);
/// True when `leaf` has a hook.
bool has_post_accumulate_grad_hooks(const Tensor& leaf);
/// Calls `leaf`'s hooks, as backward does once it has added to the leaf's gradient. A recording
/// (graph capture) is paused meanwhile: what a hook does is not part of the step's graph, and a
/// replayed step, which runs no autograd, calls the hooks itself after the graph.
void run_post_accumulate_grad_hooks(const Tensor& leaf);

}  // namespace ingot::autograd
