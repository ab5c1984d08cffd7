// config_with_defaults: each section's own writer of its resolved form (data, model, train,
// optimizer), applied to a copy of the config.
#include "ingot/train/config_defaults.h"

#include "ingot/data/data_config.h"
#include "ingot/nn/model_builder.h"
#include "ingot/optim/optimizer_config.h"
#include "ingot/train/train_config.h"

namespace ingot::train {

YAML::Node config_with_defaults(const config::Config& cfg) {
  YAML::Node shown = YAML::Clone(cfg.root());
  const std::string& file = cfg.file();
  if (cfg.has("data")) shown["data"] = data::data_config_yaml(data::parse_data_config(cfg.node("data"), file));
  if (cfg.has("model")) shown["model"] = nn::model_config_yaml(cfg.node("model"), file);
  if (cfg.has("model") || cfg.has("train")) {  // (a pipeline trains with train's defaults when it has none)
    const TrainConfig train = parse_train_config(cfg.node("train"), file);
    YAML::Node section = train_config_yaml(train);
    section["optimizer"] = optim::optimizer_defaults_yaml(train.optimizer, file);
    shown["train"] = section;
  }
  return shown;
}

}  // namespace ingot::train
