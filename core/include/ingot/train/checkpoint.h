// Training checkpoints: everything a resumed run needs to continue bit-identically — weights and
// buffers, optimizer state, the dropout generator, and the position in the data (batches
// consumed, not prefetched), the loss scaler's state — in one safetensors file written atomically.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include "ingot/nn/module.h"
#include "ingot/ops/random.h"
#include "ingot/optim/optimizer.h"

namespace ingot::train {

/// Where training stands after a whole optimizer step.
struct TrainPosition {
  int64_t epoch = 0;     ///< 0-based epoch in progress (== the epoch count when finished)
  int64_t batch = 0;     ///< batches of that epoch consumed by completed optimizer steps
  int64_t step = 0;      ///< optimizer steps taken so far (the schedule's input)
  Generator::State rng;  ///< the dropout generator at that point
};

struct Checkpoint {
  TrainPosition position;
  nn::StateDict model;
  optim::OptimizerState optimizer;
  /// The loss scaler's scalars (amp::GradScaler::state_dict()); empty when loss scaling is off and
  /// in checkpoints written before it was recorded.
  std::map<std::string, std::string> scaler;
  /// The best-epoch tracker's state (ModelSelection::state()); empty without a validation split.
  std::map<std::string, std::string> selection;
  /// load_checkpoint: what could not be verified in a checkpoint of an older format (empty for a
  /// current one, which the checksum covers whole).
  std::string note;
};

/// Writes `file` (".safetensors"): tensors "model/<name>" and "optimizer/<name>", metadata
/// "ingot_checkpoint" = "2", the position, the optimizer's scalars as "optimizer/<key>" and the
/// loss scaler's as "scaler/<key>" (none when it has none), the best-epoch tracker's as
/// "selection/<key>", and the file's checksum over all of it (io::kChecksumKey).
/// Atomic: a crash leaves the previous file (or none), never a half-written one.
void save_checkpoint(const std::filesystem::path& file, const Checkpoint& checkpoint);

/// Reads a checkpoint written by save_checkpoint; InputError naming the file for anything else
/// (a plain weights file, a corrupt or truncated file, a changed byte anywhere — tensors or
/// metadata — a format-2 file without its checksum, missing fields). A format-1 checkpoint (older
/// Ingot) is verified by its data checksum where it has one, and `note` says what was not checked.
Checkpoint load_checkpoint(const std::filesystem::path& file);

}  // namespace ingot::train
