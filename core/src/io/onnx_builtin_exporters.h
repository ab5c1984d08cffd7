// The ONNX exporters of core's layers (registered into exporter_registry() when it is first used).
#pragma once

#include "ingot/io/onnx_export.h"

namespace ingot::io::onnx::detail {

/// Linear, Conv2d, BatchNorm2d, LayerNorm, ReLU, GELU, Sigmoid, Tanh, MaxPool2d, AvgPool2d,
/// AdaptiveAvgPool2d, Flatten, Dropout, Embedding, Sequential, BasicBlock.
void add_builtin_exporters(ExporterRegistry& r);

}  // namespace ingot::io::onnx::detail
