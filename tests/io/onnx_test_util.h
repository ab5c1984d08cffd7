// Helpers for the ONNX export tests: the test venv's python (onnxruntime, onnx, numpy), .npy
// writing, and running an exported model through tests/io/onnx_run.py.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "ingot/io/onnx_export.h"
#include "ingot/nn/module.h"

namespace ingot::test {

/// $INGOT_BUILD_DIR/test-venv/bin/python when it exists and imports onnxruntime and onnx; else
/// nullopt after printing INGOT_SKIP (the caller returns).
std::optional<std::string> onnx_python_or_skip();

/// Writes `t` (f32 or i64, any shape) as a .npy file (version 1.0, little-endian, C order).
void write_npy(const std::filesystem::path& path, const Tensor& t);

/// What onnxruntime computed for an exported model.
struct OnnxRun {
  Tensor logits;     ///< f32
  std::string info;  ///< onnx_run.py's JSON: ir_version, opsets, metadata, inputs, outputs, initializers
};

/// Runs the ONNX file `model` with onnxruntime on `x` (dim 0 the batch) with `python`, its
/// scratch files in `dir`, and returns its output. REQUIREs each step to succeed.
OnnxRun run_onnx(const std::string& python, const std::filesystem::path& model, const Tensor& x,
                 const std::filesystem::path& dir);

/// Exports `model` (in eval mode) for samples of `input_shape`, runs onnxruntime on `x` (whose
/// dim 0 is the batch) with `python`, and returns its output. REQUIREs each step to succeed.
OnnxRun run_exported(const std::string& python, const nn::Module& model, const Shape& input_shape, const Tensor& x,
                     const io::onnx::ExportOptions& extra = {});

/// The model's own forward on `x` (no graph recorded).
Tensor forward(nn::Module& model, const Tensor& x);

}  // namespace ingot::test
