// ONNX export of a module tree: an exporter registry keyed by Module::type_name() (built-in layers
// registered by core, an extension plugin registers its own layers' exporters the same way) and
// export_onnx, which writes the ModelProto (opset 17) of a model in eval mode.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ingot/io/onnx_graph.h"
#include "ingot/nn/module.h"

namespace ingot::io::onnx {

/// Emits the nodes of module `m` (at dotted `path`; its tensors' state_dict names are
/// path + "." + name) applied to value `input`, and returns its output value. The output's shape
/// is m.output_shape(input's shape) unless the exporter sets it (OnnxGraph::set_shape). A
/// container exports its children with graph.module(child, path + "." + name, value).
using ModuleExporter = std::function<std::string(OnnxGraph& graph, const nn::Module& m, const std::string& path,
                                                 const std::string& input)>;

/// The exporters by type_name ("Linear", "Conv2d", ...), each with its origin ("builtin" or the
/// extension plugin that registered it).
class ExporterRegistry {
 public:
  struct Entry {
    ModuleExporter exporter;
    std::string origin;
  };
  /// Adds the exporter of `type_name`; throws ConfigError when that type has one already.
  void add(const std::string& type_name, ModuleExporter exporter);
  /// The entry of `type_name`, or null.
  const Entry* find(const std::string& type_name) const;
  /// Type names with an exporter, sorted.
  std::vector<std::string> types() const;

 private:
  std::map<std::string, Entry> entries_;
};

/// The process's exporter registry, with the built-in layers' exporters.
ExporterRegistry& exporter_registry();

/// The name of child `name` of the module at `path` ("" is the model itself).
inline std::string child_path(const std::string& path, const std::string& name) {
  return path.empty() ? name : path + "." + name;
}

/// What the graph takes: a classifier's features, or a language model's token ids.
enum class InputKind {
  Features,  ///< "input" f32 [N, *input_shape]; output "logits" [N, classes]
  TokenIds,  ///< "input_ids" int64 [N, T], T any length up to input_shape[0] (the block size);
             ///< output "logits" [N, T, vocab]
};

/// What goes into the file beside the graph.
struct ExportOptions {
  Shape input_shape;  ///< one sample, without the batch dim; for token ids [block_size]
  InputKind input = InputKind::Features;
  std::vector<std::string> class_names;  ///< metadata "class_names" (a JSON list); empty: "0", "1", ...
  std::vector<float> normalize_mean;     ///< metadata "normalize_mean" / "normalize_std" (JSON lists)
  std::vector<float> normalize_std;
  std::string tokenizer;        ///< metadata "tokenizer" of token ids ("byte", "sentencepiece"); empty: none
  std::string tokenizer_model;  ///< metadata "tokenizer_model": a trained tokenizer's file in the run folder
  std::string run_name;         ///< metadata "run"
  /// More metadata, as given (a BERT's special token ids).
  std::vector<std::pair<std::string, std::string>> extra_metadata;
  std::string producer_version;  ///< ModelProto.producer_version
};

/// Result of export_onnx: the serialized model and what it holds.
struct ExportResult {
  std::string bytes;
  Shape output_shape;  ///< for batch 1 (and the longest T): [1, classes] or [1, block_size, vocab]
  size_t nodes = 0;
  size_t initializers = 0;
};

/// Serializes `model` (run it in eval mode: BatchNorm with running statistics, Dropout off) as an
/// ONNX ModelProto with output "logits" and the input options.input names. Metadata: features
/// carry class_names, normalize_mean/std and input_shape; token ids carry tokenizer (and
/// tokenizer_model), block_size and vocab_size; both carry run. Throws InputError naming the
/// first layer without an exporter (or one an exporter refuses), ShapeError when input_shape does
/// not fit.
ExportResult export_onnx(const nn::Module& model, const ExportOptions& options);

}  // namespace ingot::io::onnx
