// check_model_fits_data: a shape-only pass of one sample through the model, and the key that
// sets its number of outputs, found in the `model:` section as written (a preset's or a layer's).
#include "ingot/train/model_fit.h"

#include <fmt/format.h>

#include <algorithm>

#include "ingot/base/error.h"
#include "ingot/config/schema.h"

namespace ingot::train {
namespace {

/// The key that sets the model's number of outputs, and its node (for the line).
struct OutputKey {
  std::string name;
  YAML::Node node;
};

OutputKey output_key(const YAML::Node& m) {
  if (const YAML::Node layers = m["layers"]; layers.IsDefined() && layers.IsSequence()) {
    // The last layer that sets a size (linear, conv2d, basic_block: out; embedding: dim).
    for (size_t i = layers.size(); i-- > 0;) {
      const YAML::Node entry = layers[i];
      if (!entry.IsMap()) continue;
      for (const char* key : {"out", "dim"})
        if (entry[key].IsDefined()) return {fmt::format("model.layers[{}].{}", i, key), entry[key]};
    }
    return {"the out: of a last linear layer in model.layers", layers};
  }
  if (m["preset"].IsDefined() && m["preset"].Scalar() == "mlp" && m["sizes"].IsDefined() && m["sizes"].IsSequence() &&
      m["sizes"].size() > 0)
    return {"model.sizes[-1] (the last size)", m["sizes"][m["sizes"].size() - 1]};
  const bool bert_mlm =
      m["preset"].IsDefined() && m["preset"].Scalar() == "bert" && m["head"].IsDefined() && m["head"].Scalar() == "mlm";
  if (m["preset"].IsDefined() && (m["preset"].Scalar() == "gpt" || bert_mlm))
    return {"model.vocab_size", m["vocab_size"].IsDefined() ? m["vocab_size"] : m};
  if (m["classes"].IsDefined()) return {"model.classes", m["classes"]};
  return {"model.classes", m};
}

}  // namespace

void check_model_fits_data(const nn::Module& model, const YAML::Node& m, const std::string& file,
                           const std::optional<Shape>& input_shape, const Shape& sample, int64_t classes,
                           const Shape& target) {
  const std::string at = config::where(file, m);
  if (input_shape && !(*input_shape == sample))
    throw ConfigError(fmt::format("{}: model.input_shape is {} but the data's samples are {}",
                                  m["input_shape"].IsDefined() ? config::where(file, m["input_shape"]) : at,
                                  input_shape->str(), sample.str()));
  Shape one{1};
  for (int64_t d : sample) one.push_back(d);
  Shape output;
  try {
    output = model.output_shape(one);
  } catch (const ShapeError& e) {
    throw ConfigError(fmt::format("{}: the model does not fit the data's samples {}: {}", at, sample.str(), e.what()));
  }
  if (!target.empty()) {  // a target per position: logits [1, T, classes]
    Shape expected{1};
    for (int64_t d : target) expected.push_back(d);
    expected.push_back(classes);
    if (output == expected) return;
    const bool vocab_only = output.size() == expected.size() && output.back() != classes &&
                            std::equal(expected.begin(), expected.end() - 1, output.begin());
    if (vocab_only) {
      const OutputKey key = output_key(m);
      throw ConfigError(
          fmt::format("{}: the model gives {} logits per position but the data's vocabulary has {} "
                      "tokens: set {} to {}",
                      config::where(file, key.node), output.back(), classes, key.name, classes));
    }
    throw ConfigError(
        fmt::format("{}: the model gives {} for one sample of {} token ids, not {} (logits per "
                    "position over the {}-token vocabulary)",
                    at, output.str(), sample.str(), expected.str(), classes));
  }
  if (output.size() == 2 && output[0] == 1 && output[1] == classes) return;
  if (output.size() != 2 || output[0] != 1)
    throw ConfigError(
        fmt::format("{}: the model gives {} for one sample of {}, not [1, {}] (one logit per class): end "
                    "it with a flatten and a linear layer of out: {}",
                    at, output.str(), sample.str(), classes, classes));
  const OutputKey key = output_key(m);
  throw ConfigError(fmt::format("{}: the model gives {} outputs per sample but the data has {} classes: set {} to {}",
                                config::where(file, key.node), output[1], classes, key.name, classes));
}

}  // namespace ingot::train
