// The ONNX exporter of the BERT preset (registered into exporter_registry() beside the built-ins).
#pragma once

#include "ingot/io/onnx_export.h"

namespace ingot::io::onnx::detail {

/// Bert (either head), with its layers and padding mask.
void add_bert_exporters(ExporterRegistry& r);

}  // namespace ingot::io::onnx::detail
