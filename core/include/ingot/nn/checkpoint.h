// Gradient checkpointing of modules (torch.utils.checkpoint for nn): a module flagged with
// Module::set_checkpoint runs as one checkpointed segment, and checkpoint_sequential splits a
// Sequential's children into segments. Parameter names and state_dict never change.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

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

/// train.checkpointing.segments: checkpoint_sequential on a Sequential model (the `layers:`
/// lists and every preset build one). Throws ConfigError at `where` ("file:line") for any other
/// model or a segment count the model cannot take.
void apply_checkpointing(Module& model, int64_t segments, const std::string& where);

/// Runs `run(x)` as one checkpointed segment (autograd::checkpoint) on behalf of `modules`: the
/// train/eval mode each of them and their descendants has now is set again while the segment
/// is recomputed in the backward pass, and put back afterwards. The modules must outlive the
/// backward pass. Without a graph being recorded this is run(x).
Tensor run_checkpointed(const std::vector<Module*>& modules, const std::function<Tensor(const Tensor&)>& run,
                        const Tensor& x);

}  // namespace ingot::nn
