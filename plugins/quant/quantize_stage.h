// The `quantize` pipeline stage: post-training int8 quantization of the pipeline's model, in place.
//   mode: static | dynamic, per_channel, reduce_range,
//   calibration: {batches, observer: minmax | moving_average | histogram | percentile, percentile},
//   tolerance: {absolute, batches}  (the accuracy gate), or load: FILE (a saved int8 model).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "converter.h"
#include "ingot/config/schema.h"
#include "ingot/train/stage.h"
#include "observer.h"

namespace ingot::quant {

struct QuantizeConfig {
  QuantOptions options;
  int64_t calibration_batches = 32;
  ObserverSpec observer;
  std::optional<double> tolerance;  ///< the largest accuracy drop (0..1) the gate accepts
  int64_t sensitivity_batches = 4;  ///< batches of the train split per sensitivity measurement
  std::string load;                 ///< a saved int8 model to load instead of quantizing
};

/// The stage's keys (`type` excluded).
config::Schema quantize_schema();
/// The stage's config from its validated node; ConfigError ("FILE:LINE: ...") for keys that do
/// not go together (calibration in dynamic mode, percentile with another observer, load with
/// quantization keys) and for a load file that does not exist.
QuantizeConfig parse_quantize_config(const YAML::Node& node, const std::string& file);

class QuantizeStage final : public train::PipelineStage {
 public:
  explicit QuantizeStage(QuantizeConfig cfg) : cfg_(std::move(cfg)) {}
  std::string name() const override { return "quantize"; }
  bool changes_model() const override { return true; }
  bool run(train::StageContext& context) override;
  /// Swaps in the int8 layers a saved model describes and loads it.
  bool prepare_saved(nn::ModulePtr& model, const io::SafetensorsFile& weights) const override;

 private:
  bool load(train::StageContext& context);
  QuantizeConfig cfg_;
};

}  // namespace ingot::quant
