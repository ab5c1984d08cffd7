// The accuracy gate: while the int8 model's accuracy is more than `absolute` below the f32 model's,
// the int8 layer that hurts most goes back to f32. How much a layer hurts (its sensitivity) is
// measured once: the relative squared error of the model's output, against the f32 model's, with
// only that layer in int8, over a few batches.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "converter.h"
#include "ingot/data/data_loader.h"
#include "ingot/train/evaluate.h"

namespace ingot::quant {

/// Sensitivity of every unit (0 for one the device does not run in int8): sum (y_i - y)^2 / sum y^2
/// over up to `batches` batches of `loader`, y the all-f32 output, y_i the output with only unit i
/// int8. Leaves every unit f32.
std::vector<double> sensitivities(nn::Module& model, Converter& converter, data::DataLoader& loader, int64_t batches);

struct GateStep {
  size_t unit = 0;  ///< the unit put back in f32
  double sensitivity = 0.0;
  double accuracy = 0.0;  ///< of the model after it
};

struct GateResult {
  double f32_accuracy = 0.0;
  double int8_accuracy = 0.0;  ///< of the model as left installed
  std::vector<GateStep> steps;
};

/// Installs every unit in int8, evaluates, and puts units back in f32 (most sensitive first) while
/// f32_accuracy - accuracy > absolute. `evaluate` returns the accuracy of the model as installed
/// (0..1); `log` gets one line per decision.
GateResult run_gate(Converter& converter, const std::vector<double>& sensitivity, double f32_accuracy, double absolute,
                    const std::function<double()>& evaluate, const std::function<void(const std::string&)>& log);

}  // namespace ingot::quant
