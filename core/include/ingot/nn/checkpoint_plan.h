// Where gradient checkpointing cuts a model: its units (Sequential::units), the activation bytes
// each keeps for backward, measured in two small forwards, and segment ends chosen from them —
// N segments balanced so that the backward pass's peak is as low as N allows, or one segment per
// block (a residual or transformer block). The plan is what Sequential::set_checkpoint_plan runs.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ingot/nn/sequential.h"

namespace ingot::nn {

/// What one unit costs in memory, per sample.
struct UnitCost {
  int64_t kept = 0;        ///< bytes it leaves allocated for backward: its saved tensors and output
  int64_t output = 0;      ///< bytes of its output (what a segment that starts after it keeps)
  bool starts_run = true;  ///< a segment may start here (no fused run of units crosses this point)
};

/// Per-sample costs of `model`'s units in training mode: two forwards under grad mode of
/// `make_input(2)` and `make_input(4)` (a batch of that many samples on the model's device), the
/// difference halved, so that one-time allocations (workspaces, packed weights) drop out. The
/// model's buffers (BatchNorm's running statistics) and every random generator its forward draws
/// from are put back afterwards: measuring changes nothing a run computes.
std::vector<UnitCost> measure_units(Sequential& model, const std::function<Tensor(int64_t)>& make_input);

/// Segment ends over a model's units, and what the plan's backward pass is estimated to hold.
struct CheckpointPlan {
  std::vector<size_t> ends;        ///< as Sequential::set_checkpoint_plan takes them
  std::vector<std::string> names;  ///< each segment's first and last unit ("stem.0-layer1.0")
  int64_t peak = 0;                ///< estimated activation peak per sample with the plan
  int64_t plain = 0;               ///< the same without checkpointing
  /// "5 segments (balanced by measured activations): estimated activation peak 12.3 MiB of 61.0
  /// MiB plain at batch 128".
  std::string describe(const std::string& how, int64_t batch) const;
};

/// The estimated activation peak per sample of `ends` (see the .cpp for the model): the largest,
/// over the segments, of what the backward pass holds while it runs that segment.
int64_t estimated_peak(const std::vector<UnitCost>& costs, const std::vector<size_t>& ends);
/// At most `segments` segments with the lowest estimated peak, cut only where a fused run of
/// units does not cross.
CheckpointPlan balanced_plan(const std::vector<UnitCost>& costs, int64_t segments);
/// One segment per block unit (Module::is_block) and one per run of other units between blocks.
CheckpointPlan block_plan(const std::vector<Sequential::Unit>& units, const std::vector<UnitCost>& costs);
/// Fills `plan.names` from the units.
void name_segments(CheckpointPlan& plan, const std::vector<Sequential::Unit>& units);

}  // namespace ingot::nn
