// build_model: the `model:` section -> a Module. Presets and `layers:` lists share the layer
// constructors; every problem becomes one ConfigError naming the file, line and key.
#include "ingot/nn/model_builder.h"

#include <fmt/ranges.h>

#include <map>
#include <set>

#include "ingot/nn/attention.h"
#include "ingot/nn/bert.h"
#include "ingot/nn/dropout.h"
#include "ingot/nn/gpt.h"
#include "ingot/nn/presets.h"
#include "ingot/nn/sequential.h"
#include "layer_factory.h"

namespace ingot::nn {

namespace {

using config::where;

config::Field list_field(const std::string& key) {
  config::Field f;
  f.key = key;
  f.type = config::FieldType::List;
  return f;
}

// The keys each way of describing a model may use (besides `preset` / `layers`).
const std::map<std::string, std::set<std::string>>& keys_by_kind() {
  static const std::map<std::string, std::set<std::string>> keys = {
      {"layers", {"input_shape"}},
      {"mlp", {"input_shape", "sizes", "activation", "dropout"}},
      {"simple_cnn", {"input_shape", "in_channels", "width", "hidden", "classes", "dropout"}},
      {"resnet", {"input_shape", "in_channels", "depth", "width", "classes", "style", "zero_init_residual"}},
      {"vgg", {"input_shape", "in_channels", "depth", "batch_norm", "classes", "hidden", "pool", "dropout"}},
      {"mobilenet_v2", {"input_shape", "in_channels", "width_mult", "classes", "dropout"}},
      {"gpt", {"n_layer", "n_head", "n_embd", "block_size", "vocab_size", "bias", "dropout", "rotary"}},
      {"bert",
       {"n_layer", "n_head", "n_embd", "intermediate", "block_size", "vocab_size", "pad_id", "head", "classes",
        "dropout"}},
  };
  return keys;
}

std::vector<int64_t> int_list(const YAML::Node& list, const std::string& file, const std::string& key, int64_t min,
                              size_t min_len, size_t max_len) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < list.size(); ++i) {
    const YAML::Node v = list[i];
    int64_t x = 0;
    bool ok = v.IsScalar();
    if (ok) {
      try {
        x = v.as<int64_t>();
      } catch (const YAML::Exception&) {
        ok = false;
      }
    }
    if (!ok || x < min) {
      throw ConfigError(fmt::format("{}: 'model.{}[{}]' must be an integer >= {}, got {}", where(file, v), key, i, min,
                                    v.IsScalar() ? config::quote_value(v.Scalar()) : "a list or map"));
    }
    out.push_back(x);
  }
  if (out.size() < min_len || out.size() > max_len) {
    throw ConfigError(fmt::format("{}: 'model.{}' must have {} to {} entries, got {}", where(file, list), key, min_len,
                                  max_len, out.size()));
  }
  return out;
}

int64_t int_or(const YAML::Node& m, const char* key, int64_t fallback) {
  return m[key].IsDefined() && !m[key].IsNull() ? m[key].as<int64_t>() : fallback;
}

double float_or(const YAML::Node& m, const char* key, double fallback) {
  return m[key].IsDefined() && !m[key].IsNull() ? m[key].as<double>() : fallback;
}

ModulePtr build_layers(const YAML::Node& m, const std::string& file, const std::optional<Shape>& input, Generator& gen,
                       Generator* dropout_gen) {
  const YAML::Node layers = m["layers"];
  if (layers.size() == 0) throw ConfigError(fmt::format("{}: 'model.layers' is empty", where(file, layers)));
  auto net = std::make_shared<Sequential>();
  std::optional<Shape> shape = input;
  for (size_t i = 0; i < layers.size(); ++i) {
    const YAML::Node entry = layers[i];
    const std::string path = fmt::format("model.layers[{}]", i);
    ModulePtr layer = detail::build_layer(entry, file, path, shape, gen, dropout_gen);
    if (shape) {
      try {
        shape = layer->output_shape(*shape);
      } catch (const ShapeError& e) {
        throw ConfigError(fmt::format("{}: {} ({}) does not fit the output of the layers before it: {}",
                                      where(file, entry), path, layer->type_name(), e.what()));
      }
    }
    net->push_back(std::move(layer));
  }
  return net;
}

// The (C, H, W) a conv preset gets from input_shape or in_channels, checking that they agree.
std::array<int64_t, 3> image_shape(const YAML::Node& m, const std::string& file, const std::optional<Shape>& input,
                                   std::array<int64_t, 3> fallback) {
  std::array<int64_t, 3> chw = fallback;
  if (m["in_channels"].IsDefined()) chw[0] = m["in_channels"].as<int64_t>();
  if (input) {
    if (input->size() != 3) {
      throw ConfigError(fmt::format("{}: 'model.input_shape' must be [channels, height, width] for preset {}, got {}",
                                    where(file, m["input_shape"]), m["preset"].Scalar(), input->str()));
    }
    if (m["in_channels"].IsDefined() && chw[0] != (*input)[0]) {
      throw ConfigError(fmt::format("{}: 'model.in_channels' {} disagrees with model.input_shape {}",
                                    where(file, m["in_channels"]), chw[0], input->str()));
    }
    chw = {(*input)[0], (*input)[1], (*input)[2]};
  }
  return chw;
}

MlpOptions mlp_options(const YAML::Node& m, const std::string& file) {
  if (!m["sizes"].IsDefined()) {
    throw ConfigError(fmt::format("{}: preset mlp needs 'model.sizes' (e.g. [784, 512, 256, 10])", where(file, m)));
  }
  MlpOptions o;
  o.sizes = int_list(m["sizes"], file, "sizes", 1, 2, 64);
  if (m["activation"].IsDefined()) o.activation = m["activation"].Scalar();
  o.dropout = float_or(m, "dropout", 0.0);
  return o;
}

SimpleCnnOptions simple_cnn_options(const YAML::Node& m, const std::string& file, const std::optional<Shape>& input) {
  SimpleCnnOptions o;
  const auto chw = image_shape(m, file, input, {1, 28, 28});
  o.in_channels = chw[0];
  o.height = chw[1];
  o.width = chw[2];
  o.channels = int_or(m, "width", o.channels);
  o.hidden = int_or(m, "hidden", o.hidden);
  o.classes = int_or(m, "classes", o.classes);
  o.dropout = float_or(m, "dropout", o.dropout);
  return o;
}

ResNetOptions resnet_options(const YAML::Node& m, const std::string& file, const std::optional<Shape>& input) {
  ResNetOptions o;
  o.in_channels = image_shape(m, file, input, {3, 32, 32})[0];
  o.depth = int_or(m, "depth", o.depth);
  // torchvision's depths build torchvision's ResNets unless the config asks for the CIFAR layout.
  o.style = m["style"].IsDefined() ? m["style"].Scalar() : is_imagenet_resnet_depth(o.depth) ? "imagenet" : "cifar";
  o.width = int_or(m, "width", o.style == "imagenet" ? 64 : o.width);
  o.classes = int_or(m, "classes", o.classes);
  if (m["zero_init_residual"].IsDefined()) o.zero_init_residual = m["zero_init_residual"].as<bool>();
  if (o.style == "cifar" && (o.depth - 2) % 6 != 0) {
    throw ConfigError(
        fmt::format("{}: 'model.depth' must be 6n + 2 (8, 14, 20, 32, 44, 56, ...) for a CIFAR ResNet, "
                    "or 18, 34, 50, 101, 152 for torchvision's, got {}",
                    where(file, m["depth"]), o.depth));
  }
  if (o.style == "imagenet" && !is_imagenet_resnet_depth(o.depth)) {
    throw ConfigError(fmt::format("{}: 'model.depth' must be 18, 34, 50, 101 or 152 for style imagenet, got {}",
                                  where(file, m["depth"]), o.depth));
  }
  return o;
}

VggOptions vgg_options(const YAML::Node& m, const std::string& file, const std::optional<Shape>& input) {
  VggOptions o;
  o.in_channels = image_shape(m, file, input, {3, 224, 224})[0];
  o.depth = int_or(m, "depth", o.depth);
  if (o.depth != 11 && o.depth != 13 && o.depth != 16 && o.depth != 19) {
    throw ConfigError(fmt::format("{}: 'model.depth' must be 11, 13, 16 or 19 for preset vgg, got {}",
                                  where(file, m["depth"]), o.depth));
  }
  if (m["batch_norm"].IsDefined()) o.batch_norm = m["batch_norm"].as<bool>();
  o.classes = int_or(m, "classes", o.classes);
  o.hidden = int_or(m, "hidden", o.hidden);
  o.pool = int_or(m, "pool", o.pool);
  o.dropout = float_or(m, "dropout", o.dropout);
  return o;
}

MobileNetV2Options mobilenet_v2_options(const YAML::Node& m, const std::string& file,
                                        const std::optional<Shape>& input) {
  MobileNetV2Options o;
  o.in_channels = image_shape(m, file, input, {3, 224, 224})[0];
  o.width_mult = float_or(m, "width_mult", o.width_mult);
  o.classes = int_or(m, "classes", o.classes);
  o.dropout = float_or(m, "dropout", o.dropout);
  return o;
}

GptConfig gpt_options(const YAML::Node& m) {
  GptConfig o;
  o.n_layer = int_or(m, "n_layer", o.n_layer);
  o.n_head = int_or(m, "n_head", o.n_head);
  o.n_embd = int_or(m, "n_embd", o.n_embd);
  o.block_size = int_or(m, "block_size", o.block_size);
  o.vocab_size = int_or(m, "vocab_size", o.vocab_size);
  if (m["bias"].IsDefined()) o.bias = m["bias"].as<bool>();
  if (m["rotary"].IsDefined()) o.rotary = m["rotary"].as<bool>();
  if (m["dropout"].IsDefined()) o.dropout = m["dropout"].as<double>();
  return o;
}

BertConfig bert_options(const YAML::Node& m) {
  BertConfig o;
  o.n_layer = int_or(m, "n_layer", o.n_layer);
  o.n_head = int_or(m, "n_head", o.n_head);
  o.n_embd = int_or(m, "n_embd", o.n_embd);
  o.intermediate = int_or(m, "intermediate", 4 * o.n_embd);
  o.block_size = int_or(m, "block_size", o.block_size);
  o.vocab_size = int_or(m, "vocab_size", o.vocab_size);
  o.pad_id = int_or(m, "pad_id", o.pad_id);
  o.classes = int_or(m, "classes", o.classes);
  if (m["head"].IsDefined()) o.head = m["head"].Scalar();
  if (m["dropout"].IsDefined()) o.dropout = m["dropout"].as<double>();
  return o;
}

ModulePtr build_preset(const YAML::Node& m, const std::string& file, const std::optional<Shape>& input, Generator& gen,
                       Generator* dropout_gen) {
  const std::string preset = m["preset"].Scalar();
  if (preset == "mlp") return make_mlp(mlp_options(m, file), &gen, dropout_gen);
  if (preset == "simple_cnn") return make_simple_cnn(simple_cnn_options(m, file, input), &gen, dropout_gen);
  if (preset == "gpt") return std::make_shared<Gpt>(gpt_options(m), &gen, dropout_gen);
  if (preset == "bert") {
    const BertConfig o = bert_options(m);
    if (o.vocab_size < 1)
      throw ConfigError(
          fmt::format("{}: preset bert needs model.vocab_size; a text dataset (text, "
                      "text_classification) sets it: its tokenizer's ids and 4 special tokens",
                      where(file, m)));
    return std::make_shared<Bert>(o, &gen, dropout_gen);
  }
  if (preset == "vgg") return make_vgg(vgg_options(m, file, input), &gen, dropout_gen);
  if (preset == "mobilenet_v2") return make_mobilenet_v2(mobilenet_v2_options(m, file, input), &gen, dropout_gen);
  return make_resnet(resnet_options(m, file, input), &gen);
}

}  // namespace

config::Schema model_schema() {
  config::Schema s;
  s.add(list_field("layers"));
  s.string("preset", false, {"mlp", "simple_cnn", "resnet", "vgg", "mobilenet_v2", "gpt", "bert"});
  s.add(list_field("input_shape"));
  s.add(list_field("sizes"));
  s.string("activation", false, {"relu", "gelu", "sigmoid", "tanh"});
  s.number("dropout", 0.0, 0.99);
  s.integer("in_channels", 1, 65536).integer("classes", 1, 1 << 24);
  s.integer("depth", 8, 1000).integer("width", 1, 65536).integer("hidden", 1, 1 << 24);
  s.integer("n_layer", 1, 1024).integer("n_head", 1, 1024).integer("n_embd", 1, 1 << 16);
  s.integer("block_size", 1, 1 << 20).integer("vocab_size", 1, 1 << 24).boolean("bias").boolean("rotary");
  s.string("style", false, {"cifar", "imagenet"}).boolean("zero_init_residual").boolean("batch_norm");
  s.integer("pool", 1, 64).number("width_mult", 0.01, 16);
  s.integer("intermediate", 1, 1 << 24).integer("pad_id", -1, 1 << 24).string("head", false, {"classify", "mlm"});
  return s;
}

std::optional<Shape> model_input_shape(const YAML::Node& m, const std::string& file) {
  if (!m.IsMap() || !m["input_shape"].IsDefined()) return std::nullopt;
  const YAML::Node n = m["input_shape"];
  if (!n.IsSequence()) {
    throw ConfigError(fmt::format("{}: 'model.input_shape' must be a list like [1, 28, 28]", where(file, n)));
  }
  return Shape(int_list(n, file, "input_shape", 1, 1, 3));
}

ModulePtr build_model(const YAML::Node& m, const std::string& file, Generator& gen, Generator* dropout_gen) {
  model_schema().validate(m, file, "model");
  const bool has_layers = m["layers"].IsDefined(), has_preset = m["preset"].IsDefined();
  if (has_layers == has_preset) {
    throw ConfigError(
        fmt::format("{}: model: give either 'layers:' (a list of layers) or 'preset:' (mlp, "
                    "simple_cnn, resnet, vgg, mobilenet_v2, gpt, bert){}",
                    where(file, m), has_layers ? ", not both" : ""));
  }
  const std::string kind = has_layers ? "layers" : m["preset"].Scalar();
  const std::set<std::string>& allowed = keys_by_kind().at(kind);
  for (auto it = m.begin(); it != m.end(); ++it) {
    const std::string key = it->first.Scalar();
    if (key != "layers" && key != "preset" && allowed.count(key) == 0) {
      throw ConfigError(fmt::format("{}: 'model.{}' does not apply to {}; it takes {}", where(file, it->first), key,
                                    has_layers ? "a layers list" : "preset " + kind, fmt::join(allowed, ", ")));
    }
  }
  const std::optional<Shape> chw = model_input_shape(m, file);
  std::optional<Shape> input;
  if (chw) {
    input = Shape{1};
    for (int64_t d : *chw) input->push_back(d);
  }
  ModulePtr model;
  try {
    model = has_layers ? build_layers(m, file, input, gen, dropout_gen) : build_preset(m, file, chw, gen, dropout_gen);
  } catch (const ConfigError&) {
    throw;
  } catch (const Error& e) {
    throw ConfigError(fmt::format("{}: model ({}): {}", where(file, m), kind, e.what()));
  }
  if (input && has_preset) {
    try {
      model->output_shape(*input);
    } catch (const ShapeError& e) {
      throw ConfigError(fmt::format("{}: model.input_shape {} does not fit preset {}: {}",
                                    where(file, m["input_shape"]), chw->str(), kind, e.what()));
    }
  }
  return model;
}

YAML::Node model_config_yaml(const YAML::Node& m, const std::string& file) {
  YAML::Node out = YAML::Clone(m);
  if (!m.IsMap() || !m["preset"].IsDefined()) return out;  // a layers list: as written
  const std::string preset = m["preset"].Scalar();
  const std::optional<Shape> input = model_input_shape(m, file);
  out.SetStyle(YAML::EmitterStyle::Block);  // one key a line, as the other sections print
  if (preset == "mlp") {
    const MlpOptions o = mlp_options(m, file);
    out["activation"] = o.activation;
    out["dropout"] = o.dropout;
  } else if (preset == "simple_cnn") {
    const SimpleCnnOptions o = simple_cnn_options(m, file, input);
    out["in_channels"] = o.in_channels;
    out["width"] = o.channels;
    out["hidden"] = o.hidden;
    out["dropout"] = o.dropout;
  } else if (preset == "resnet") {
    const ResNetOptions o = resnet_options(m, file, input);
    out["in_channels"] = o.in_channels;
    out["depth"] = o.depth;
    out["width"] = o.width;
    out["style"] = o.style;
    out["zero_init_residual"] = o.zero_init_residual;
  } else if (preset == "vgg") {
    const VggOptions o = vgg_options(m, file, input);
    out["in_channels"] = o.in_channels;
    out["depth"] = o.depth;
    out["batch_norm"] = o.batch_norm;
    out["hidden"] = o.hidden;
    out["pool"] = o.pool;
    out["dropout"] = o.dropout;
  } else if (preset == "mobilenet_v2") {
    const MobileNetV2Options o = mobilenet_v2_options(m, file, input);
    out["in_channels"] = o.in_channels;
    out["width_mult"] = o.width_mult;
    out["dropout"] = o.dropout;
  } else if (preset == "gpt") {
    const GptConfig o = gpt_options(m);
    out["n_layer"] = o.n_layer;
    out["n_head"] = o.n_head;
    out["n_embd"] = o.n_embd;
    out["block_size"] = o.block_size;
    out["vocab_size"] = o.vocab_size;
    out["bias"] = o.bias;
    out["dropout"] = o.dropout;
    out["rotary"] = o.rotary;
  } else if (preset == "bert") {
    const BertConfig o = bert_options(m);
    out["n_layer"] = o.n_layer;
    out["n_head"] = o.n_head;
    out["n_embd"] = o.n_embd;
    out["intermediate"] = o.intermediate;
    out["block_size"] = o.block_size;
    if (o.vocab_size > 0) out["vocab_size"] = o.vocab_size;  // else the data's, once it is read
    out["pad_id"] = o.pad_id;
    out["head"] = o.head;
    if (o.head == "classify") out["classes"] = o.classes;
    out["dropout"] = o.dropout;
  }
  return out;
}

void set_dropout_generator(Module& model, Generator* gen) {
  for (auto& [name, m] : model.named_modules()) {
    if (auto* d = dynamic_cast<Dropout*>(m)) d->set_generator(gen);
    if (auto* a = dynamic_cast<MultiheadAttention*>(m)) a->set_generator(gen);
    if (auto* b = dynamic_cast<BertLayer*>(m)) b->set_generator(gen);
  }
}

}  // namespace ingot::nn
