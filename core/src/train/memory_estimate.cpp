// MemoryEstimate: a walk over the model's layers with output_shape, no tensor allocated.
#include "ingot/train/memory_estimate.h"

#include <fmt/format.h>

#include <algorithm>

#include "ingot/base/error.h"
#include "ingot/nn/sequential.h"
#include "ingot/runtime/memory_tracker.h"

namespace ingot::train {
namespace {

int64_t leaf_count(const nn::Module& m) {
  if (m.named_children().empty()) return 1;
  int64_t n = 0;
  for (const auto& [name, child] : m.named_children()) n += leaf_count(*child);
  return n;
}

/// Adds the elements `m` keeps for backward on `input` to `sum` (and the largest to `largest`);
/// returns its output shape.
Shape walk(const nn::Module& m, const Shape& input, int64_t& sum, int64_t& largest) {
  if (const auto* seq = dynamic_cast<const nn::Sequential*>(&m)) {
    Shape x = input;
    for (const auto& [name, child] : seq->named_children()) x = walk(*child, x, sum, largest);
    return x;
  }
  const Shape out = m.output_shape(input);
  // A block (a residual block, say): each inner layer at the block's largest size.
  const int64_t size = std::max(out.numel(), m.named_children().empty() ? out.numel() : input.numel());
  sum += size * leaf_count(m);
  largest = std::max(largest, size);
  return out;
}

}  // namespace

std::string MemoryEstimate::str() const {
  return fmt::format(
      "about {}: weights {}, gradients {}, optimizer state {}, activations {} and batches {} at batch "
      "{}{}",
      format_memory_bytes(total()), format_memory_bytes(weights), format_memory_bytes(gradients), format_memory_bytes(optimizer_state),
      format_memory_bytes(activations), format_memory_bytes(data), batch,
      on_host ? fmt::format(", datasets {}", format_memory_bytes(dataset)) : std::string());
}

std::string MemoryEstimate::advice() const {
  const int64_t fixed = weights + gradients + optimizer_state;
  if (on_host && dataset > fixed && dataset > activations + data)
    return fmt::format("the datasets in memory dominate ({}): use a machine with more memory", format_memory_bytes(dataset));
  if (activations + data >= fixed)
    return fmt::format(
        "activations dominate ({} per sample): lower data.batch_size (use train.accumulate to keep the "
        "effective batch)",
        format_memory_bytes(per_sample()));
  return fmt::format(
      "the model itself dominates (weights, gradients and optimizer state: {}): use a smaller model, "
      "an optimizer with less state (SGD), or a device with more memory",
      format_memory_bytes(fixed));
}

MemoryEstimate estimate_training_memory(const nn::Module& model, const Shape& sample, int64_t batch,
                                        int state_per_parameter, int64_t batches_in_flight, int64_t dataset_bytes,
                                        Device device, ActivationOptions activation) {
  MemoryEstimate e;
  e.batch = batch;
  e.dataset = dataset_bytes;
  e.on_host = device.is_cpu();
  for (const auto& [name, p] : model.named_parameters()) {
    const int64_t bytes = p.numel() * dtype_size(p.dtype());
    e.weights += bytes;
    e.gradients += bytes;
    e.optimizer_state += bytes * state_per_parameter;
  }
  for (const auto& [name, b] : model.named_buffers()) e.weights += b.numel() * dtype_size(b.dtype());
  DType dt = DType::F32;
  if (const auto params = model.parameters(); !params.empty()) dt = params.front().dtype();
  Shape input{batch};
  for (int64_t d : sample) input.push_back(d);
  int64_t sum = input.numel(), largest = input.numel();
  (void)walk(model, input, sum, largest);
  const int64_t element = activation.element_bytes > 0 ? activation.element_bytes : dtype_size(dt);
  e.activations = (sum + 2 * largest) * element;
  if (activation.checkpoint_peak_per_sample > 0)  // measured, in the parameters' dtype
    e.activations = activation.checkpoint_peak_per_sample * batch * element / dtype_size(dt);
  e.data = input.numel() * dtype_size(DType::F32) * std::max<int64_t>(1, batches_in_flight);
  return e;
}

void check_memory_fits(const MemoryEstimate& estimate, const MemoryBudget& budget, Device device) {
  if (budget.available <= 0 || estimate.total() <= budget.available) return;
  throw InputError(fmt::format(
      "not enough memory on {}: training needs {}, but {} is available ({}): {}; or set train.memory_check: false if "
      "the estimate is wrong for this model",
      device.str(), estimate.str(), format_memory_bytes(budget.available), budget.bound_by, estimate.advice()));
}

}  // namespace ingot::train
