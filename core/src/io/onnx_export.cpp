// export_onnx and the exporter registry: walks the module tree through the exporters registered
// by type_name, then wraps the graph in a ModelProto with the run's metadata.
#include "ingot/io/onnx_export.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include "ingot/base/error.h"
#include "ingot/config/type_registry.h"
#include "onnx_bert_exporters.h"
#include "onnx_builtin_exporters.h"
#include "onnx_transformer_exporters.h"

namespace ingot::io::onnx {

void ExporterRegistry::add(const std::string& type_name, ModuleExporter exporter) {
  const std::string origin = config::registering_origin();
  if (auto it = entries_.find(type_name); it != entries_.end())
    throw ConfigError(fmt::format("ONNX exporter for layer type '{}' from {} is already registered by {}", type_name,
                                  origin, it->second.origin));
  entries_.emplace(type_name, Entry{std::move(exporter), origin});
}

const ExporterRegistry::Entry* ExporterRegistry::find(const std::string& type_name) const {
  auto it = entries_.find(type_name);
  return it == entries_.end() ? nullptr : &it->second;
}

std::vector<std::string> ExporterRegistry::types() const {
  std::vector<std::string> out;
  for (const auto& [name, e] : entries_) out.push_back(name);
  return out;
}

ExporterRegistry& exporter_registry() {
  static ExporterRegistry* registry = [] {
    auto* r = new ExporterRegistry;
    detail::add_builtin_exporters(*r);
    detail::add_transformer_exporters(*r);
    detail::add_bert_exporters(*r);
    return r;
  }();
  return *registry;
}

std::string OnnxGraph::module(const nn::Module& m, const std::string& path, const std::string& input) {
  const ExporterRegistry::Entry* e = exporter_registry().find(m.type_name());
  if (e == nullptr)
    throw InputError(
        fmt::format("ONNX export: layer '{}' ({}) has no ONNX exporter; layer types with one: {} (an extension plugin "
                    "adds one with ingot::io::onnx::exporter_registry().add)",
                    path.empty() ? "<model>" : path, m.type_name(), fmt::join(exporter_registry().types(), ", ")));
  const Shape in = shape(input);
  const std::string out = e->exporter(*this, m, path, input);
  if (!has_shape(out)) set_shape(out, m.output_shape(in));
  return out;
}

ExportResult export_onnx(const nn::Module& model, const ExportOptions& options) {
  INGOT_CHECK_AS(!model.is_training(), InputError,
                 "ONNX export: the model is in training mode; call eval() first (BatchNorm running statistics, "
                 "Dropout off)");
  INGOT_CHECK_AS(!options.input_shape.empty(), InputError, "ONNX export: no input shape (model.input_shape)");
  const bool tokens = options.input == InputKind::TokenIds;
  INGOT_CHECK_AS(!tokens || options.input_shape.size() == 1, InputError,
                 "ONNX export: token ids are [N, T]: the input shape must be [block_size], not {}",
                 options.input_shape.str());
  OnnxGraph g;
  const std::string input = g.fresh(tokens ? "input_ids" : "input"), output = g.fresh("logits");
  Shape in{1};
  for (int64_t d : options.input_shape) in.push_back(d);
  g.set_shape(input, in);
  if (tokens) {  // shapes are recorded for the longest T; exporters keep T dynamic
    g.set_dtype(input, DType::I64);
    g.set_dim_names(input, {"N", "T"});
  }
  const std::string last = g.module(model, "", input);
  const Shape out_shape = g.shape(last);
  g.node("Identity", {last}, {}, "", {output});
  g.set_shape(output, out_shape);
  g.set_dim_names(output, g.dim_names(last));

  std::vector<std::pair<std::string, std::string>> metadata;
  if (tokens) {
    if (!options.tokenizer.empty()) metadata.emplace_back("tokenizer", options.tokenizer);
    if (!options.tokenizer_model.empty()) metadata.emplace_back("tokenizer_model", options.tokenizer_model);
    metadata.emplace_back("block_size", std::to_string(options.input_shape[0]));
    if (out_shape.size() == 3) metadata.emplace_back("vocab_size", std::to_string(out_shape.back()));
  }
  if (!tokens || out_shape.size() == 2) {  // a classifier, of features or of token sequences
    std::vector<std::string> names = options.class_names;
    if (names.empty())  // classes by number, as `ingot predict` names them
      for (int64_t c = 0; c < out_shape.back(); ++c) names.push_back(std::to_string(c));
    metadata.emplace_back("class_names", nlohmann::json(names).dump());
    if (!options.normalize_mean.empty()) {
      // (fmt writes a float's shortest form: 0.286, not the double 0.2860000133514404)
      metadata.emplace_back("normalize_mean", fmt::format("[{}]", fmt::join(options.normalize_mean, ", ")));
      metadata.emplace_back("normalize_std", fmt::format("[{}]", fmt::join(options.normalize_std, ", ")));
    }
    if (!tokens) metadata.emplace_back("input_shape", nlohmann::json(options.input_shape.vec()).dump());
  }
  for (const auto& kv : options.extra_metadata) metadata.push_back(kv);
  if (!options.run_name.empty()) metadata.emplace_back("run", options.run_name);

  ExportResult r;
  r.nodes = g.node_count();
  r.initializers = g.initializer_count();
  r.output_shape = out_shape;
  r.bytes = model_proto(g.graph_proto("ingot", input, output), kOpset, options.producer_version, metadata);
  return r;
}

}  // namespace ingot::io::onnx
