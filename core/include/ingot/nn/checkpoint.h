// Gradient checkpointing of modules (torch.utils.checkpoint for nn): a module flagged with
// Module::set_checkpoint runs as one checkpointed segment, and checkpoint_sequential splits a
// Sequential's children into segments. Parameter names and state_dict never change.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ingot/nn/checkpoint_plan.h"
#include "ingot/nn/module.h"
#include "ingot/nn/sequential.h"

namespace ingot::nn {

/// torch.utils.checkpoint.checkpoint_sequential, as a setting of `model`: from now on its
/// forward runs its children in `segments` contiguous segments of size(children) / segments
/// (the last one takes the rest) and checkpoints all but the last, whose output the loss needs
/// right away (segments = 1: none). Fusion (Linear + ReLU, ...) works inside a segment, and a
/// boundary that falls inside a fusable run moves to the run's end, so that the model runs the
/// very kernels of the plain forward and the gradients are bit-identical to it. 0 turns it off.
/// Throws InputError when segments exceeds the number of children.
void checkpoint_sequential(Sequential& model, int64_t segments);

/// train.checkpointing: how a Sequential model (the `layers:` lists and every preset build one)
/// is cut into checkpointed segments.
struct CheckpointingOptions {
  int64_t segments = 0;  ///< at most this many segments, balanced by measured activation bytes
  bool blocks = false;   ///< one segment per block (Module::is_block) instead
};

/// train.checkpointing on `model`: measures its units' activation bytes on batches from
/// `make_input` (measure_units), chooses the segments (balanced_plan or block_plan) and sets the
/// plan; returns it. Unlike torch's checkpoint_sequential, segments are cut by measured bytes,
/// not by layer count, and may fall between the blocks of a nested Sequential (a ResNet stage),
/// so that no segment holds most of the activations. Throws ConfigError at `where` ("file:line")
/// for any other model, a segment count the model cannot take, or blocks on a model without any.
CheckpointPlan apply_checkpointing(Module& model, const CheckpointingOptions& options,
                                   const std::function<Tensor(int64_t)>& make_input, const std::string& where);

/// Runs `run(x)` as one checkpointed segment (autograd::checkpoint) on behalf of `modules`: the
/// train/eval mode each of them and their descendants has now is set again while the segment
/// is recomputed in the backward pass, and put back afterwards. The modules must outlive the
/// backward pass. Without a graph being recorded this is run(x).
Tensor run_checkpointed(const std::vector<Module*>& modules, const std::function<Tensor(const Tensor&)>& run,
                        const Tensor& x);

}  // namespace ingot::nn
