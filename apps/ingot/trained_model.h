// The trained model of a run folder, as `ingot predict` and `ingot export` use it: the run's
// config.resolved.yaml (with --set overrides), the model built from it, its weights
// (model.safetensors, else the newest checkpoint that loads, or a weights file given directly),
// the backend, the input shape and the class names.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "ingot/config/backend_select.h"
#include "ingot/config/config.h"
#include "ingot/data/data_config.h"
#include "ingot/nn/module.h"

namespace ingot::cli {

struct TrainedModel {
  config::Config cfg;              ///< the run's resolved config, overrides applied
  config::BackendSelection sel;    ///< the backend it names (data and model go there)
  nn::ModulePtr model;             ///< in eval mode, on sel.device
  Shape input_shape;               ///< one sample, without the batch dim
  data::DataConfig data;           ///< the run's data section (normalisation)
  std::string weights;             ///< the file the weights came from
  std::vector<std::string> class_names;  ///< empty when the run recorded none: class numbers
  std::filesystem::path run;       ///< the run folder

  /// "3" or the class's name.
  std::string class_name(int64_t c) const;
};

/// Loads `run_or_weights`: a run folder (runs/<name>), or a .safetensors file inside one (its
/// model.safetensors or a checkpoint), with `sets` (KEY=VALUE) applied to the run's config.
/// Throws InputError naming the folder when there is no config.resolved.yaml, no input_shape or
/// no weights.
TrainedModel load_trained_model(const std::filesystem::path& run_or_weights, const std::vector<std::string>& sets);

}  // namespace ingot::cli
