// MemoryEstimate: what a training run will hold at its peak — weights, gradients, optimizer
// state, activations for the configured batch, batches in flight — estimated from shapes before
// anything is allocated, checked against the device's (or the cgroup's) memory, and used to name
// the real cause when an allocation fails anyway.
#pragma once

#include <cstdint>
#include <string>

#include "ingot/nn/module.h"
#include "ingot/runtime/device_memory.h"

namespace ingot::train {

struct MemoryEstimate {
  int64_t batch = 0;
  int64_t weights = 0;          ///< parameters and buffers
  int64_t gradients = 0;        ///< one per parameter
  int64_t optimizer_state = 0;  ///< state_per_parameter tensors the size of each parameter
  int64_t activations = 0;      ///< kept for backward at `batch`, plus the largest gradient in flight
  int64_t data = 0;             ///< batches assembled, prefetched and on the device
  int64_t dataset = 0;          ///< the datasets held in host memory: counted when training on the CPU
  bool on_host = true;          ///< training on the CPU: the datasets share its memory
  int64_t total() const { return weights + gradients + optimizer_state + activations + data + (on_host ? dataset : 0); }
  /// The part that scales with the batch (activations and data).
  int64_t per_sample() const { return batch > 0 ? (activations + data) / batch : 0; }
  /// "about 1.2 GiB: weights 10.0 MiB, gradients 10.0 MiB, optimizer state 20.0 MiB, activations
  /// 1.1 GiB and data 3.1 MiB at batch 128".
  std::string str() const;
  /// What to change when it does not fit: the batch when activations dominate, else the model.
  std::string advice() const;
};

/// What changes the activations kept for backward: mixed precision stores most of them in the
/// low dtype (2 bytes), gradient checkpointing keeps a segment's input and recomputes the rest.
struct ActivationOptions {
  int64_t element_bytes = 0;  ///< 0: the parameters' dtype; 2 under train.amp
  /// train.checkpointing: the plan's estimated activation peak per sample (nn/checkpoint_plan.h),
  /// in the parameters' dtype (0 = off)
  int64_t checkpoint_peak_per_sample = 0;
};

/// Estimates training `model` on samples of shape `sample` (no batch dimension) in batches of
/// `batch`, with `state_per_parameter` optimizer tensors per parameter (Adam 2, SGD with momentum
/// 1) and `batches_in_flight` batches held by the loader and the device feeder; `dataset_bytes`
/// count when `device` is the CPU. Activations are
/// the output of every layer a Sequential runs (a block with inner layers counts each of them at
/// the block's largest size) plus twice the largest one for backward's gradients in flight: an
/// estimate from shapes, not a measurement (fusion and early frees make the real peak lower).
MemoryEstimate estimate_training_memory(const nn::Module& model, const Shape& sample, int64_t batch,
                                        int state_per_parameter, int64_t batches_in_flight, int64_t dataset_bytes,
                                        Device device, ActivationOptions activation = {});

/// Throws InputError when `estimate` exceeds what `budget` says is available on `device`, with
/// both numbers and what to change; does nothing when the budget is unknown.
void check_memory_fits(const MemoryEstimate& estimate, const MemoryBudget& budget, Device device);

}  // namespace ingot::train
