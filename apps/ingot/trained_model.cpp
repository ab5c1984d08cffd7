// Loading a run's trained model for predict and export (see trained_model.h).
#include "trained_model.h"

#include <fmt/format.h>

#include "ingot/base/error.h"
#include "ingot/config/overrides.h"
#include "ingot/extension/extension_loader.h"
#include "ingot/io/safetensors.h"
#include "ingot/io/state_dict.h"
#include "ingot/nn/bert.h"
#include "ingot/nn/gpt.h"
#include "ingot/nn/model_builder.h"
#include "ingot/train/checkpoint.h"
#include "ingot/train/pipeline_schema.h"
#include "ingot/train/run_dir.h"
#include "ingot/train/stage.h"

namespace fs = std::filesystem;

namespace ingot::cli {
namespace {

/// Loads `file` (read and verified as `f`) into `model`: a checkpoint's model (taken during
/// training: the config's structure), or a model saved after the stages, which the stages that
/// changed the structure (distill's student, quantize's int8 layers) redo first.
void load_weights(nn::ModulePtr& model, const io::SafetensorsFile& f, const fs::path& file, const config::Config& cfg) {
  if (f.metadata.contains("ingot_checkpoint")) {
    model->load_state_dict(train::load_checkpoint(file).model, /*strict=*/true);
    return;
  }
  for (const auto& stage : train::make_stages(cfg.node("stages"), cfg.file()))
    if (stage->prepare_saved(model, f)) return;  // (it loaded the file)
  model->load_state_dict(f.tensors, /*strict=*/true);
}

/// The run's model with the weights of `file`: a damaged file (checksum), weights that do not fit
/// the model and weights that are not finite are each an InputError naming the file.
nn::ModulePtr model_from(const fs::path& file, const config::Config& cfg) {
  const io::SafetensorsFile f = io::load_safetensors(file);
  Generator init(0), dropout(0);
  nn::ModulePtr model = nn::build_model(cfg.node("model"), cfg.file(), init, &dropout);
  try {
    load_weights(model, f, file, cfg);
  } catch (const Error& e) {
    throw InputError(fmt::format("{}: the weights do not fit the run's model: {}", file.string(), e.what()));
  }
  io::require_finite(model->state_dict(), file.string());
  return model;
}

}  // namespace

std::string TrainedModel::class_name(int64_t c) const {
  return c >= 0 && c < static_cast<int64_t>(class_names.size()) ? class_names[c] : std::to_string(c);
}

TrainedModel load_trained_model(const fs::path& run_or_weights, const std::vector<std::string>& sets) {
  fs::path run = run_or_weights, weights;
  if (fs::is_regular_file(run_or_weights)) {
    weights = run_or_weights;
    run = run_or_weights.parent_path();
    if (!fs::exists(run / "config.resolved.yaml") && fs::exists(run.parent_path() / "config.resolved.yaml"))
      run = run.parent_path();  // (a checkpoint in runs/<name>/checkpoints/)
  }
  const fs::path config_file = run / "config.resolved.yaml";
  INGOT_CHECK_AS(fs::exists(config_file), InputError,
                 "{}: no config.resolved.yaml: give the folder of a run (runs/<name>) or a weights file inside one",
                 run_or_weights.string());
  ExtensionLoader::instance().load_all();
  YAML::Node root;
  try {
    root = config::load_yaml(config_file.string());
    INGOT_CHECK_AS(root.IsMap(), ConfigError, "{}: expected a map of config sections", config_file.string());
  } catch (const Error& e) {
    throw ConfigError(
        fmt::format("{}: the run's config is damaged; restore its config.resolved.yaml (ingot run wrote "
                    "it) or train the run again",
                    e.what()));
  }
  std::vector<std::string> class_names;
  if (const YAML::Node names = root["resolved"]["class_names"]; names && names.IsSequence())
    for (const auto& n : names) class_names.push_back(n.as<std::string>());
  root.remove("resolved");
  // Runs written by earlier builds hold an empty `data.<dataset>:` (e.g. `fashion_mnist: ~`) that the
  // schema does not know: dropped, as it says nothing.
  if (YAML::Node data = root["data"]; data.IsMap() && data["dataset"]) {
    const std::string dataset = data["dataset"].as<std::string>();
    if (data[dataset] && data[dataset].IsNull()) data.remove(dataset);
  }
  if (!sets.empty()) config::apply_overrides(root, sets, train::pipeline_schema());
  config::Config cfg = config::Config::from_yaml(root, config_file.string(), train::pipeline_schema());
  const config::BackendSelection sel = config::select_backends(cfg.backend(), cfg.where("backend"));
  std::optional<Shape> shape = nn::model_input_shape(cfg.node("model"), cfg.file());
  if (const YAML::Node m = cfg.node("model"); !shape && m["preset"] && m["preset"].Scalar() == "gpt")
    shape = Shape{m["block_size"] ? m["block_size"].as<int64_t>() : nn::GptConfig{}.block_size};  // token ids
  if (const YAML::Node m = cfg.node("model"); !shape && m["preset"] && m["preset"].Scalar() == "bert")
    shape = Shape{m["block_size"] ? m["block_size"].as<int64_t>() : nn::BertConfig{}.block_size};
  INGOT_CHECK_AS(shape.has_value(), InputError, "{}: the run's model has no input_shape", config_file.string());

  if (weights.empty() && fs::exists(run / "model.safetensors")) weights = run / "model.safetensors";
  nn::ModulePtr model;
  if (!weights.empty()) {
    model = model_from(weights, cfg);
  } else {  // the newest checkpoint that loads, verifies and fits, as a resume would take
    std::string problems;
    for (const fs::path& stem : train::RunDir::view(run).checkpoints_to_try(&problems)) {
      try {
        weights = stem.string() + ".safetensors";
        model = model_from(weights, cfg);
        break;
      } catch (const InputError& e) {
        problems += (problems.empty() ? "" : "; ") + std::string(e.what());
      }
    }
    INGOT_CHECK_AS(model != nullptr, InputError, "{}: no model.safetensors, and no checkpoint loads{}", run.string(),
                   problems.empty() ? std::string() : fmt::format(" ({})", problems));
  }
  model->eval();
  model->to(sel.device);
  data::DataConfig data = data::parse_data_config(cfg.node("data"), cfg.file());
  data.input_shape = shape;
  return TrainedModel{std::move(cfg),         sel, std::move(model), *shape, std::move(data), weights.string(),
                      std::move(class_names), run};
}

}  // namespace ingot::cli
