// The converter: puts each unit of a model in int8 or f32, as asked, by swapping modules in place.
// Static: QuantizedLinear / QuantizedConv2d (its ReLU fused, the ReLU module an Identity); in a
// Sequential, an int8 unit whose next compute layer is an int8 unit with only pass-through layers
// between hands it u8 (requantized with its output parameters, which become the next unit's input
// parameters); otherwise it returns f32. Dynamic: DynamicQuantizedLinear. A unit whose int8 op the
// device's backends do not run stays f32.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ingot/nn/module.h"
#include "layer_units.h"

namespace ingot::quant {

struct QuantOptions {
  bool dynamic = false;       ///< DynamicQuantizedLinear (Linear units only, no calibration)
  bool per_channel = true;    ///< weights: one scale per output channel, else one per tensor
  bool reduce_range = false;  ///< activations over [0, 127] (torch's fbgemm setting)
};

class Converter {
 public:
  /// Quantizes each unit's weight once. `units` must have been folded (fold_units) and, for
  /// static quantization, calibrated; they must outlive the converter.
  Converter(nn::Module& model, std::vector<Unit>& units, const QuantOptions& options);

  /// Installs unit i as int8 where int8[i] and the device runs it, as f32 elsewhere.
  void install(const std::vector<bool>& int8);
  /// All units int8 (where the device runs them).
  void install_all() { install(std::vector<bool>(units_.size(), true)); }

  /// After install: whether unit i runs int8.
  bool is_int8(size_t i) const { return int8_.at(i); }
  size_t int8_count() const;
  /// Whether the device runs unit i's int8 op (probed once).
  bool device_runs_unit(size_t i);
  /// One line about unit i as installed: kind, int8 / f32, weight scheme and scales, the u8
  /// parameters of its input and output.
  std::string describe(size_t i) const;

  const std::vector<Unit>& units() const { return units_; }
  const QuantOptions& options() const { return options_; }

 private:
  nn::ModulePtr make_int8(size_t i, const QParams* in, const std::optional<QParams>& out) const;
  /// The int8 unit unit i hands u8 to (i < j), if any, under the current choice `want`.
  std::optional<size_t> consumer(size_t i, const std::vector<bool>& want);

  nn::Module& model_;
  std::vector<Unit>& units_;
  QuantOptions options_;
  Device device_;
  std::vector<bool> int8_;
  std::vector<std::optional<bool>> runs_f32_, runs_u8_;  // device probes, per unit
  std::vector<std::optional<size_t>> producer_;          // the unit whose u8 output unit i takes
  std::vector<bool> requantizes_;
};

}  // namespace ingot::quant
