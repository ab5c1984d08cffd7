// The `layers:` vocabulary: each type's keys (a schema per type, so typos get "did you mean")
// and the constructor call they map to.
#include "layer_factory.h"

#include <fmt/ranges.h>

#include <functional>
#include <map>

#include "ingot/config/schema.h"
#include "ingot/nn/activation.h"
#include "ingot/nn/attention.h"
#include "ingot/nn/basic_block.h"
#include "ingot/nn/batch_norm.h"
#include "ingot/nn/conv2d.h"
#include "ingot/nn/dropout.h"
#include "ingot/nn/embedding.h"
#include "ingot/nn/flatten.h"
#include "ingot/nn/layer_norm.h"
#include "ingot/nn/layer_registry.h"
#include "ingot/nn/linear.h"
#include "ingot/nn/model_builder.h"
#include "ingot/nn/pooling.h"
#include "ingot/nn/transformer.h"

namespace ingot::nn::detail {

namespace {

using config::Schema;

/// One entry's config and context, with typed readers of its keys.
struct Entry {
  const YAML::Node& node;
  const std::string& file;
  const std::string& path;
  const std::optional<Shape>& input;
  Generator& gen;
  Generator* dropout_gen;

  Entry(const YAML::Node& n, const std::string& f, const LayerContext& c)
      : node(n), file(f), path(c.path), input(c.input), gen(c.gen), dropout_gen(c.dropout_gen) {}

  bool has(const char* key) const { return node.IsMap() && node[key].IsDefined() && !node[key].IsNull(); }
  int64_t i(const char* key, int64_t fallback) const { return has(key) ? node[key].as<int64_t>() : fallback; }
  double f(const char* key, double fallback) const { return has(key) ? node[key].as<double>() : fallback; }
  bool b(const char* key, bool fallback) const { return has(key) ? node[key].as<bool>() : fallback; }
  /// A size the entry may omit when the input shape gives it (dim `dim` of the input).
  int64_t size_or_input(const char* key, int dim) const {
    if (has(key)) return node[key].as<int64_t>();
    if (input && input->size() > (dim < 0 ? 0 : dim)) return (*input)[dim < 0 ? input->size() + dim : dim];
    throw ConfigError(fmt::format("{}: {}: missing '{}' (needed when model.input_shape is not given)",
                                  config::where(file, node), path, key));
  }
};

Pool2dParams pool_params(const Entry& e, bool avg) {
  Pool2dParams p;
  const int64_t k = e.i("kernel", 1);
  p.kernel = {k, k};
  const int64_t s = e.i("stride", k);
  p.stride = {s, s};
  const int64_t pad = e.i("padding", 0);
  p.padding = {pad, pad};
  p.ceil_mode = e.b("ceil_mode", false);
  if (avg) p.count_include_pad = e.b("count_include_pad", true);
  return p;
}

/// Registers a built-in layer: `keys` declares its keys, `make` builds it from an Entry.
void add(LayerRegistry& r, const std::string& type, const std::function<void(Schema&)>& keys,
         const std::function<ModulePtr(const Entry&)>& make) {
  Schema s;
  keys(s);
  r.add({type, std::move(s),
         [make](const YAML::Node& node, const std::string& file, const LayerContext& ctx) {
           return make(Entry(node, file, ctx));
         },
         ""});
}

void attention_keys(Schema& s) {
  s.integer("dim", 1, {}, true).integer("heads", 1, {}, true).boolean("bias").number("dropout", 0, 0.99);
  s.boolean("causal").boolean("rotary");
}

AttentionConfig attention_config(const Entry& e) {
  AttentionConfig a;
  a.dim = e.i("dim", 1);
  a.heads = e.i("heads", 1);
  a.bias = e.b("bias", true);
  a.dropout = e.f("dropout", 0.0);
  a.causal = e.b("causal", true);
  a.rotary = e.b("rotary", false);
  return a;
}

using LayerType = std::pair<std::function<void(Schema&)>, std::function<ModulePtr(const Entry&)>>;

void add_builtins(LayerRegistry& r) {
  const std::vector<std::pair<std::string, LayerType>> types = {
      {"linear",
       {[](Schema& s) { s.integer("in", 1, {}, true).integer("out", 1, {}, true).boolean("bias"); },
        [](const Entry& e) {
          return std::make_shared<Linear>(e.i("in", 0), e.i("out", 0), e.b("bias", true), &e.gen);
        }}},
      {"conv2d",
       {[](Schema& s) {
          s.integer("in", 1, {}, true).integer("out", 1, {}, true).integer("kernel", 1, {}, true);
          s.integer("stride", 1).integer("padding", 0).integer("dilation", 1).integer("groups", 1).boolean("bias");
        },
        [](const Entry& e) {
          Conv2dOptions o;
          o.stride = {e.i("stride", 1), e.i("stride", 1)};
          o.padding = {e.i("padding", 0), e.i("padding", 0)};
          o.dilation = {e.i("dilation", 1), e.i("dilation", 1)};
          o.groups = e.i("groups", 1);
          o.bias = e.b("bias", true);
          return std::make_shared<Conv2d>(e.i("in", 0), e.i("out", 0), e.i("kernel", 1), o, &e.gen);
        }}},
      {"batchnorm2d",
       {[](Schema& s) {
          s.integer("features", 1).number("eps", 0).number("momentum", 0, 1).boolean("affine");
          s.boolean("track_running_stats");
        },
        [](const Entry& e) {
          BatchNormOptions o;
          o.eps = e.f("eps", 1e-5);
          o.momentum = e.f("momentum", 0.1);
          o.affine = e.b("affine", true);
          o.track_running_stats = e.b("track_running_stats", true);
          return std::make_shared<BatchNorm2d>(e.size_or_input("features", 1), o);
        }}},
      {"layernorm",
       {[](Schema& s) { s.integer("features", 1).number("eps", 0).boolean("affine"); },
        [](const Entry& e) {
          return std::make_shared<LayerNorm>(Shape{e.size_or_input("features", -1)}, e.f("eps", 1e-5),
                                             e.b("affine", true));
        }}},
      {"dropout",
       {[](Schema& s) { s.number("p", 0, 1); },
        [](const Entry& e) { return std::make_shared<Dropout>(e.f("p", 0.5), e.dropout_gen); }}},
      {"relu", {[](Schema&) {}, [](const Entry&) { return make_activation("relu"); }}},
      {"relu6", {[](Schema&) {}, [](const Entry&) { return make_activation("relu6"); }}},
      {"gelu",
       {[](Schema& s) {
          s.string("approximate", false, {"none", "tanh"});
        },
        [](const Entry& e) {
          return std::make_shared<GELU>(e.has("approximate") ? e.node["approximate"].as<std::string>() : "none");
        }}},
      {"sigmoid", {[](Schema&) {}, [](const Entry&) { return make_activation("sigmoid"); }}},
      {"tanh", {[](Schema&) {}, [](const Entry&) { return make_activation("tanh"); }}},
      {"maxpool2d",
       {[](Schema& s) {
          s.integer("kernel", 1, {}, true).integer("stride", 1).integer("padding", 0).boolean("ceil_mode");
        },
        [](const Entry& e) { return std::make_shared<MaxPool2d>(pool_params(e, false)); }}},
      {"avgpool2d",
       {[](Schema& s) {
          s.integer("kernel", 1, {}, true).integer("stride", 1).integer("padding", 0).boolean("ceil_mode");
          s.boolean("count_include_pad");
        },
        [](const Entry& e) { return std::make_shared<AvgPool2d>(pool_params(e, true)); }}},
      {"adaptiveavgpool2d",
       {[](Schema& s) { s.integer("output", 1); },
        [](const Entry& e) {
          const int64_t o = e.i("output", 1);
          return std::make_shared<AdaptiveAvgPool2d>(std::array<int64_t, 2>{o, o});
        }}},
      {"flatten",
       {[](Schema& s) { s.integer("start").integer("end"); },
        [](const Entry& e) { return std::make_shared<Flatten>(e.i("start", 1), e.i("end", -1)); }}},
      {"embedding",
       {[](Schema& s) { s.integer("num", 1, {}, true).integer("dim", 1, {}, true); },
        [](const Entry& e) { return std::make_shared<Embedding>(e.i("num", 1), e.i("dim", 1), &e.gen); }}},
      {"position_embedding",
       {[](Schema& s) { s.integer("max_positions", 1, {}, true).integer("dim", 1, {}, true).number("std", 0); },
        [](const Entry& e) {
          return std::make_shared<PositionEmbedding>(e.i("max_positions", 1), e.i("dim", 1), e.f("std", 0.02), &e.gen);
        }}},
      {"multi_head_attention",
       {[](Schema& s) { attention_keys(s); },
        [](const Entry& e) {
          return std::make_shared<MultiheadAttention>(attention_config(e), &e.gen, e.dropout_gen);
        }}},
      {"transformer_block",
       {[](Schema& s) {
          attention_keys(s);
          s.integer("hidden", 1).string("norm", false, {"pre", "post"}).number("eps", 0);
          s.string("activation", false, {"gelu", "gelu_tanh", "relu"});
        },
        [](const Entry& e) {
          BlockConfig b;
          b.attention = attention_config(e);
          b.hidden = e.i("hidden", 0);
          b.norm_first = !e.has("norm") || e.node["norm"].as<std::string>() == "pre";
          b.eps = e.f("eps", 1e-5);
          if (e.has("activation")) b.activation = e.node["activation"].as<std::string>();
          return std::make_shared<TransformerBlock>(b, &e.gen, e.dropout_gen);
        }}},
      {"basic_block",
       {[](Schema& s) { s.integer("in", 1, {}, true).integer("out", 1, {}, true).integer("stride", 1); },
        [](const Entry& e) {
          return std::make_shared<BasicBlock>(e.i("in", 0), e.i("out", 0), e.i("stride", 1), &e.gen);
        }}},
  };
  for (const auto& [name, t] : types) add(r, name, t.first, t.second);
}

}  // namespace

ModulePtr build_layer(const YAML::Node& entry, const std::string& file, const std::string& path,
                      const std::optional<Shape>& input, Generator& gen, Generator* dropout_gen) {
  std::string type;
  if (entry.IsScalar()) {
    type = entry.Scalar();
  } else if (entry.IsMap() && entry["type"].IsDefined() && entry["type"].IsScalar()) {
    type = entry["type"].Scalar();
  } else {
    throw ConfigError(fmt::format("{}: {} must be a layer type name or a map with 'type:' (one of {})",
                                  config::where(file, entry), path, fmt::join(layer_types(), ", ")));
  }
  const LayerRegistry& reg = layer_registry();
  if (!reg.has(type)) {
    const YAML::Node at = entry.IsMap() ? entry["type"] : entry;
    const std::string hint = config::closest_match(type, layer_types());
    throw ConfigError(fmt::format("{}: {}: unknown layer type {}; {}", config::where(file, at), path,
                                  config::quote_value(type),
                                  hint.empty() ? fmt::format("valid types: {}", fmt::join(layer_types(), ", "))
                                               : fmt::format("did you mean '{}'?", hint)));
  }
  const LayerRegistry::Entry& it = reg.get(type, file, entry);
  Schema keys = it.schema;
  keys.string("type", true);
  keys.boolean("checkpoint");  // any layer or block: a checkpointed segment of its own
  if (entry.IsMap()) {
    keys.validate(entry, file, path);
  } else {
    std::vector<std::string> needed;
    for (const config::Field& f : keys.fields()) {
      if (f.required && f.key != "type") needed.push_back(f.key);
    }
    if (!needed.empty()) {
      throw ConfigError(fmt::format("{}: {}: layer '{}' needs keys {}: write {{type: {}, {}: ...}}",
                                    config::where(file, entry), path, type, fmt::join(needed, ", "), type, needed[0]));
    }
  }
  try {
    // (a bare name gets a map of its own: assigning to a copy of `entry` would change the config)
    YAML::Node bare(YAML::NodeType::Map);
    bare["type"] = type;
    ModulePtr layer = it.make(entry.IsMap() ? entry : bare, file, LayerContext{path, input, gen, dropout_gen});
    if (entry.IsMap() && entry["checkpoint"].IsDefined() && !entry["checkpoint"].IsNull())
      layer->set_checkpoint(entry["checkpoint"].as<bool>());
    return layer;
  } catch (const ConfigError&) {
    throw;
  } catch (const Error& e) {  // a value the layer refuses (groups not dividing channels, ...)
    throw ConfigError(fmt::format("{}: {} ({}): {}", config::where(file, entry), path, type, e.what()));
  }
}

}  // namespace ingot::nn::detail

namespace ingot::nn {

LayerRegistry& layer_registry() {
  static LayerRegistry* registry = [] {
    auto* r = new LayerRegistry("layer");
    detail::add_builtins(*r);
    return r;
  }();
  return *registry;
}

std::vector<std::string> layer_types() { return layer_registry().types(); }

}  // namespace ingot::nn
