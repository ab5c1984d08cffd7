// ONNX exporters of the quant plugin's layers (QDQ form): QuantizedLinear / QuantizedConv2d as
// QuantizeLinear / DequantizeLinear around their u8 activations and i8 weights, the f32 op between,
// DynamicQuantizedLinear with DynamicQuantizeLinear, and Identity. Registered by the plugin into
// core's exporter registry, so `ingot export` and io::onnx::export_onnx handle int8 models.
#pragma once

#include "ingot/io/onnx_export.h"

namespace ingot::quant {

/// Adds the exporters of QuantizedLinear, QuantizedConv2d, DynamicQuantizedLinear and Identity to
/// `registry` (each type that has none yet).
void register_onnx_exporters(io::onnx::ExporterRegistry& registry);

}  // namespace ingot::quant
