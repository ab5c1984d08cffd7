// SyncBatchNorm (torch.nn.SyncBatchNorm): BatchNorm whose batch statistics in training are those
// of the global batch, the union of every rank's batch, reduced over a Communicator; and
// convert_sync_batchnorm, which swaps a model's BatchNorm2d layers for it in place.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "ingot/nn/batch_norm.h"
#include "ingot/nn/module.h"

namespace ingot {
class Communicator;
}

namespace ingot::parallel {

/// BatchNorm over the ranks of a communicator group. Parameters (weight, bias) and buffers
/// (running_mean, running_var, num_batches_tracked) carry torch's names, so state_dict and
/// checkpoints are those of BatchNorm2d.
///
/// Training with a group of more than one rank: per channel, the local count, sum and sum of
/// squares go through one all_reduce (Sum) as one float64 tensor [sum | sumsq | count]; the
/// global mean and biased variance normalise, the unbiased variance updates the running
/// statistics (momentum, as BatchNorm2d). Its backward pass reduces sum(dy) and sum(dy * xhat)
/// with one all_reduce (Sum), so the input gradient is that of the global batch. The weight and
/// bias gradients stay each rank's own (torch does the same): they sum, over the ranks, to the
/// global batch's, and DDP's average over the ranks of gradients of per-rank mean losses is the
/// gradient of the global mean loss. Every rank must therefore run forward and backward of the
/// layer the same number of times, in the same order relative to other collectives.
///
/// Eval mode, a null communicator or a group of one rank: exactly BatchNorm2d (the same op).
class SyncBatchNorm : public nn::Module {
 public:
  /// A new layer with fresh parameters (ones, zeros) and buffers; `comm` (may be null: no group)
  /// must outlive every forward and backward pass of the layer.
  SyncBatchNorm(int64_t num_features, const nn::BatchNormOptions& options, const Communicator* comm);
  /// A layer holding `bn`'s own parameter and buffer tensors (the same handles: an optimizer or
  /// a checkpoint made for `bn` keeps working), in `bn`'s train / eval mode.
  static std::shared_ptr<SyncBatchNorm> from_batch_norm(const nn::BatchNorm2d& bn, const Communicator* comm);

  /// Input [N, C, ...] (C = num_features). Training normalises with the global batch's
  /// statistics, updates the running statistics and adds 1 to num_batches_tracked.
  Tensor forward(const Tensor& x) override;
  Shape output_shape(const Shape& input) const override;
  std::string extra_repr() const override;

  int64_t num_features() const { return c_; }
  const nn::BatchNormOptions& options() const { return options_; }
  const Communicator* communicator() const { return comm_; }
  /// Sets the group the statistics are reduced over (null: none).
  void set_communicator(const Communicator* comm) { comm_ = comm; }
  Tensor weight() const { return weight_; }
  Tensor bias() const { return bias_; }
  Tensor running_mean() const { return running_mean_; }
  Tensor running_var() const { return running_var_; }
  Tensor num_batches_tracked() const { return num_batches_tracked_; }

 private:
  struct Shared {};  // tag of the constructor that adopts existing tensors
  SyncBatchNorm(Shared, const nn::BatchNorm2d& bn, const Communicator* comm);
  /// A fresh BatchNorm2d whose tensors a new SyncBatchNorm takes, its options checked under
  /// SyncBatchNorm's name.
  static nn::BatchNorm2d checked_batch_norm(int64_t num_features, const nn::BatchNormOptions& options);
  /// The synchronised training forward (world size > 1).
  Tensor forward_synced(const Tensor& x, bool update);

  int64_t c_;
  nn::BatchNormOptions options_;
  const Communicator* comm_;
  Tensor weight_, bias_, running_mean_, running_var_, num_batches_tracked_;
};

/// Replaces every BatchNorm2d below `root` (at any depth) by a SyncBatchNorm over `comm` that
/// holds the same parameter and buffer tensors, so state_dict keys and values, an optimizer and
/// the train / eval mode are unchanged. Returns how many layers were replaced. Throws InputError
/// when `root` itself is a BatchNorm2d (a module cannot replace itself: wrap it in a Sequential).
int convert_sync_batchnorm(nn::Module& root, const Communicator& comm);

}  // namespace ingot::parallel
