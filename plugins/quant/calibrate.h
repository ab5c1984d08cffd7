// Calibration: observers on every unit's input (a forward pre-hook on its layer) and output (a
// forward hook on the last module folded into it, so a fused ReLU's output is what is observed),
// batches of a loader run through the model in eval without gradients, then each unit's u8 input
// and output parameters from its observers.
#pragma once

#include <cstdint>
#include <vector>

#include "ingot/data/data_loader.h"
#include "ingot/nn/module.h"
#include "layer_units.h"
#include "observer.h"

namespace ingot::quant {

/// Runs up to `batches` batches of `loader` (from the start of an epoch) through `model` with
/// observers of kind `spec` on every unit, and sets each unit's input_q / output_q over the u8
/// range (reduce_range: [0, 127]). Returns the number of batches run. The hooks are removed
/// and the model's training mode restored, also when a batch throws.
int64_t calibrate(nn::Module& model, std::vector<Unit>& units, data::DataLoader& loader, int64_t batches,
                  const ObserverSpec& spec, bool reduce_range);

}  // namespace ingot::quant
