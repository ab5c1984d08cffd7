// Whether a pipeline's model fits its data, checked by shape inference before the run folder
// exists and before any step: the samples go in, one logit per class comes out.
#pragma once

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>

#include "ingot/nn/module.h"

namespace ingot::train {

/// Infers the model's output for one sample of shape `sample` (Module::output_shape, no
/// computation) and checks that it is [1, classes], as training and evaluation need. Throws
/// ConfigError "FILE:LINE: ..." when model.input_shape (`input_shape`, if given) differs from the
/// samples, when a layer does not take what the one before it gives, or when the output is not one
/// logit per class; the message names the key to change (model.sizes[-1], model.classes,
/// model.layers[K].out) at its line. `model_section` is the config's `model:` as written. With a
/// target per position (`target` [T], a language model's), the output must be [1, T, classes].
void check_model_fits_data(const nn::Module& model, const YAML::Node& model_section, const std::string& file,
                           const std::optional<Shape>& input_shape, const Shape& sample, int64_t classes,
                           const Shape& target = {});

}  // namespace ingot::train
