// The ONNX exporters of core's transformer layers (registered into exporter_registry() beside the
// built-ins).
#pragma once

#include "ingot/io/onnx_export.h"

namespace ingot::io::onnx::detail {

/// GPT, TransformerBlock, MultiheadAttention, PositionEmbedding.
void add_transformer_exporters(ExporterRegistry& r);

}  // namespace ingot::io::onnx::detail
