// Training checkpoints: everything a resumed run needs to continue bit-identically — weights and
// buffers, optimizer state, the dropout generator, and the position in the data (batches
// consumed, not prefetched) — in one safetensors file written atomically.
#pragma once

#include <cstdint>
#include <filesystem>

#include "ingot/nn/module.h"
#include "ingot/ops/random.h"
#include "ingot/optim/optimizer.h"

namespace ingot::train {

/// Where training stands after a whole optimizer step.
struct TrainPosition {
  int64_t epoch = 0;  ///< 0-based epoch in progress (== the epoch count when finished)
  int64_t batch = 0;  ///< batches of that epoch consumed by completed optimizer steps
  int64_t step = 0;   ///< optimizer steps taken so far (the schedule's input)
  Generator::State rng;  ///< the dropout generator at that point
};

struct Checkpoint {
  TrainPosition position;
  nn::StateDict model;
  optim::OptimizerState optimizer;
};

/// Writes `file` (".safetensors"): tensors "model/<name>" and "optimizer/<name>", metadata
/// "ingot_checkpoint" = "1", the position, and the optimizer's scalars as "optimizer/<key>".
/// Atomic: a crash leaves the previous file (or none), never a half-written one.
void save_checkpoint(const std::filesystem::path& file, const Checkpoint& checkpoint);

/// Reads a checkpoint written by save_checkpoint; InputError naming the file for anything else
/// (a plain weights file, a corrupt or truncated file, missing fields).
Checkpoint load_checkpoint(const std::filesystem::path& file);

}  // namespace ingot::train
