// Pipeline parallelism (GPipe): a Sequential model cut into consecutive stages, one per rank.
// Each batch is cut into micro-batches whose forwards flow rank 0 -> 1 -> ... -> last, and whose
// backwards then flow back, over a Communicator's send / recv; every rank ends with the gradients
// of its own layers.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ingot/nn/module.h"
#include "ingot/nn/sequential.h"
#include "ingot/runtime/communicator.h"

namespace ingot::parallel {

/// The loss of one micro-batch from the last stage's output and the micro-batch's targets: a
/// one-element tensor, the mean over the micro-batch's samples (as nn::cross_entropy gives).
using PipelineLossFn = std::function<Tensor(const Tensor& output, const Tensor& targets)>;

/// Layer bounds of every stage of a model of `num_layers` top-level layers split over
/// `world_size` ranks: stage s holds layers [bounds[s], bounds[s + 1]) (bounds has world_size + 1
/// entries, 0 first, num_layers last). `layer_counts` is `parallel.stages`: how many layers each
/// stage holds, in rank order (e.g. [3, 2]: rank 0 layers 0-2, rank 1 layers 3-4). Empty: the
/// layers are shared out evenly (the first num_layers % world_size stages one more). Throws one
/// ConfigError line naming `path` when a count is below 1, when there are more or fewer counts than
/// ranks, or when they do not add up to the model's layers.
std::vector<int64_t> pipeline_bounds(const std::vector<int64_t>& layer_counts, int64_t num_layers, int world_size,
                                     const std::string& path = "parallel.stages");

/// Sizes of the micro-batches of a batch of `batch` samples cut into `micro_batches` pieces:
/// min(micro_batches, batch) of them, as even as possible (the first batch % count one larger).
std::vector<int64_t> micro_batch_sizes(int64_t batch, int64_t micro_batches);

/// This rank's stage of a pipeline-parallel model. Every rank builds the full model (the same
/// way); the stage keeps only its own layers (shared with the full model, under the same names).
/// Tensors travel on the communicator's device, which must be the model's.
class PipelineParallel {
 public:
  /// Stage comm.rank() of `model` (an nn::Sequential) split into `layer_counts` layers per stage
  /// (see pipeline_bounds). Throws ConfigError when the model is not a Sequential or the split does
  /// not fit the model and the group. `comm` must outlive this object.
  PipelineParallel(const nn::ModulePtr& model, const std::vector<int64_t>& layer_counts, const Communicator& comm);

  /// Forward and backward of one batch with the GPipe schedule over `micro_batches` micro-batches
  /// (min(micro_batches, batch size) of them). Rank 0 reads `inputs`, the last rank `targets`
  /// (other ranks may pass undefined tensors). Each micro-batch's loss is weighted by its share of
  /// the batch (1/M for equal pieces), so the gradients accumulated into this stage's parameters'
  /// .grad equal the whole batch's; the caller zeroes them before and steps after. Returns the
  /// batch's loss (the last rank's, on every rank). Every rank must call it for every batch.
  double train_step(const Tensor& inputs, const Tensor& targets, const PipelineLossFn& loss_fn, int64_t micro_batches);

  /// torch's clip_grad_norm_ over the whole model: the 2-norm of every stage's gradients taken
  /// together (an all-reduce); when it exceeds `max_norm` this stage's gradients are multiplied by
  /// max_norm / (norm + 1e-6). Returns the norm before clipping, on every rank. Every rank must
  /// call it.
  double clip_grad_norm(double max_norm);

  /// The model's output for `inputs` (read on rank 0) without recording a graph, on every rank
  /// (computed by the last stage and broadcast). Every rank must call it.
  Tensor forward(const Tensor& inputs);

  /// This stage's layers (a Sequential of the model's children, named as in the model).
  nn::Sequential& stage() { return *stage_; }
  const nn::Sequential& stage() const { return *stage_; }
  /// This stage's parameters (for the optimizer), named as in the full model's state_dict. Empty
  /// for a stage of only parameter-free layers (activations, pooling, Flatten).
  std::vector<Tensor> parameters() const { return stage_->parameters(); }
  nn::NamedTensors named_parameters() const { return stage_->named_parameters(); }
  /// Training / evaluation mode of this stage's layers.
  void train(bool on = true) { stage_->train(on); }

  int stage_index() const { return rank_; }
  int num_stages() const { return world_; }
  bool is_first() const { return rank_ == 0; }
  bool is_last() const { return rank_ == world_ - 1; }
  /// This stage holds the model's layers [first_layer(), end_layer()).
  int64_t first_layer() const { return first_; }
  int64_t end_layer() const { return end_; }
  /// "stage 1 of 3: layers 2-3 (ReLU, Linear), 650 parameters", for messages and logs.
  std::string describe() const;

 private:
  /// Sends `t` (contiguous) to `peer` after a header giving its dtype and shape.
  void send_activation(const Tensor& t, int peer, int64_t count, int64_t batch) const;
  /// Receives what send_activation sent from `peer`; sets `count` and `batch` from the header.
  Tensor recv_activation(int peer, int64_t& count, int64_t& batch) const;

  const Communicator* comm_;
  std::shared_ptr<nn::Sequential> stage_;
  int rank_ = 0;
  int world_ = 1;
  int64_t first_ = 0;
  int64_t end_ = 0;
  Device device_;
};

}  // namespace ingot::parallel
