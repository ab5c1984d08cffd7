// The quant extension plugin's entry points: registers the `quantize` pipeline stage and the ONNX
// exporters of its int8 layers.
#include "ingot/extension/extension.h"
#include "onnx_exporters.h"
#include "quantize_stage.h"

INGOT_EXTENSION("quant", "0.1.0", "post-training int8 quantization: the quantize stage (static, dynamic, load)")

extern "C" INGOT_EXTENSION_EXPORT void ingot_extension_register(ingot::Registry& registry) {
  registry.stages.add(
      {"quantize", ingot::quant::quantize_schema(),
       [](const YAML::Node& node, const std::string& file) -> std::unique_ptr<ingot::train::PipelineStage> {
         return std::make_unique<ingot::quant::QuantizeStage>(ingot::quant::parse_quantize_config(node, file));
       },
       "post-training int8 quantization (static with calibration, dynamic, or load a saved one)"});
  ingot::quant::register_onnx_exporters(registry.onnx_exporters);
}
