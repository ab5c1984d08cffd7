// The ONNX exporters of core's layers (registered into exporter_registry() when it is first used)
// and what their files share.
#pragma once

#include <string>

#include "ingot/base/error.h"
#include "ingot/io/onnx_export.h"

namespace ingot::io::onnx::detail {

/// Linear, Conv2d, BatchNorm2d, LayerNorm, ReLU, GELU, Sigmoid, Tanh, MaxPool2d, AvgPool2d,
/// AdaptiveAvgPool2d, Flatten, Dropout, Embedding, Sequential, BasicBlock, Bottleneck, ReLU6,
/// InvertedResidual.
void add_builtin_exporters(ExporterRegistry& r);

/// The layer's path for messages and node names ("<model>" for the model itself).
inline std::string where(const std::string& path) { return path.empty() ? "<model>" : path; }

/// `m` as core's class `M`; InputError when a layer of the same type name is another class.
template <class M>
const M& as(const nn::Module& m, const std::string& path) {
  const M* p = dynamic_cast<const M*>(&m);
  INGOT_CHECK_AS(p != nullptr, InputError, "ONNX export: layer '{}' is a {} but not the built-in class of that name",
                 where(path), m.type_name());
  return *p;
}

}  // namespace ingot::io::onnx::detail
