// Teachers for distillation: from the pipeline, a run folder (its resolved config's model: and
// saved weights or newest checkpoint) or a weights file.
#include "teacher.h"

#include <fmt/format.h>

#include <utility>
#include <vector>

#include "ingot/base/error.h"
#include "ingot/config/config.h"
#include "ingot/config/schema.h"
#include "ingot/io/safetensors.h"
#include "ingot/io/state_dict.h"
#include "ingot/nn/model_builder.h"
#include "ingot/train/checkpoint.h"
#include "ingot/train/run_dir.h"

namespace fs = std::filesystem;

namespace ingot::distill {
namespace {

/// The checkpoint files of a run folder in the order a resume tries them (checkpoints/latest's
/// first). Only the train stage writes checkpoints: they always hold the run's model:.
std::vector<fs::path> checkpoints(const fs::path& run) {
  std::vector<fs::path> out;
  for (const fs::path& stem : train::RunDir::view(run).checkpoints_to_try())
    out.push_back(stem.string() + ".safetensors");
  return out;
}

/// The model tensors of a weights file or of an Ingot checkpoint.
std::map<std::string, Tensor> file_weights(const fs::path& file) {
  io::SafetensorsFile f = io::load_safetensors(file);
  if (f.metadata.count("ingot_checkpoint") == 0) return std::move(f.tensors);
  const train::Checkpoint c = train::load_checkpoint(file);
  return std::map<std::string, Tensor>(c.model.begin(), c.model.end());
}

/// Loads `file` into `model` strictly; the error (empty when it loaded) otherwise.
std::string try_load(nn::Module& model, const fs::path& file) {
  try {
    model.load_state_dict(file_weights(file), /*strict=*/true);
    io::require_finite(model.state_dict(), file.string());
    return "";
  } catch (const Error& e) {
    return e.what();
  }
}

}  // namespace

TeacherSpec parse_teacher(const YAML::Node& stage, const std::string& file, const std::string& path) {
  TeacherSpec spec;
  const YAML::Node node = stage["teacher"];
  spec.where = fmt::format("{}: {}.teacher", config::where(file, node), path);
  const std::string value = node.as<std::string>();
  const YAML::Node model = stage["teacher_model"];
  if (value == "current") {
    spec.kind = TeacherKind::Current;
  } else if (fs::is_directory(value)) {
    spec.kind = TeacherKind::RunFolder;
    spec.path = value;
    if (!fs::is_regular_file(spec.path / "config.resolved.yaml"))
      throw ConfigError(
          fmt::format("{}: {} is not a run folder (no config.resolved.yaml): name runs/NAME of a "
                      "finished run, a .safetensors file, or current",
                      spec.where, value));
  } else if (fs::path(value).extension() == ".safetensors") {
    spec.kind = TeacherKind::File;
    spec.path = value;
    if (!fs::is_regular_file(spec.path)) throw ConfigError(fmt::format("{}: {} does not exist", spec.where, value));
    if (model) spec.model = model;
  } else {
    throw ConfigError(fmt::format("{}: {} is neither current, a run folder nor an existing .safetensors file",
                                  spec.where, config::quote_value(value)));
  }
  if (model && spec.kind != TeacherKind::File)
    throw ConfigError(
        fmt::format("{}: {}.teacher_model applies to a .safetensors teacher only (a run folder has "
                    "its own model:, current is the pipeline's): remove it",
                    config::where(file, model), path));
  return spec;
}

Teacher load_teacher(const TeacherSpec& spec, const YAML::Node& pipeline_model, const std::string& pipeline_file) {
  INGOT_CHECK(spec.kind != TeacherKind::Current, "load_teacher: the current teacher is the pipeline's model");
  YAML::Node section = spec.model.IsNull() ? pipeline_model : spec.model;
  std::string model_file = pipeline_file;
  std::vector<fs::path> candidates{spec.path};
  if (spec.kind == TeacherKind::RunFolder) {
    model_file = (spec.path / "config.resolved.yaml").string();
    YAML::Node resolved;
    try {
      resolved = config::load_yaml(model_file);
    } catch (const Error& e) {
      throw InputError(fmt::format("{}: cannot read the teacher run's config: {}", spec.where, e.what()));
    }
    section = std::as_const(resolved)["model"];
    if (!section || !section.IsMap())
      throw InputError(fmt::format("{}: {} has no model: section", spec.where, model_file));
    // model.safetensors holds the run's last model, which a later stage (distill, prune) may have
    // changed; its checkpoints always hold model:.
    candidates = checkpoints(spec.path);
    if (const fs::path saved = spec.path / "model.safetensors"; fs::is_regular_file(saved))
      candidates.insert(candidates.begin(), saved);
    if (candidates.empty())
      throw InputError(
          fmt::format("{}: {} has neither model.safetensors nor a checkpoint: finish that run (its save "
                      "stage) or name a weights file",
                      spec.where, spec.path.string()));
  }
  // The teacher's initial weights are overwritten: a generator of its own leaves the pipeline's
  // (and so the student's initialisation) as it would be with any other teacher.
  Generator scratch(0);
  Teacher t{nn::build_model(section, model_file, scratch), ""};
  std::string problems;
  for (const fs::path& file : candidates) {
    const std::string error = try_load(*t.model, file);
    if (error.empty()) {
      t.source = file.string();
      return t;
    }
    problems += fmt::format("{}{}: {}", problems.empty() ? "" : "; ", file.string(), error);
  }
  throw InputError(fmt::format("{}: no weights fit the teacher's model ({}): {}", spec.where, model_file, problems));
}

void freeze_teacher(nn::Module& teacher, Device device) {
  for (const Tensor& p : teacher.parameters()) p.set_requires_grad(false);
  teacher.eval();
  teacher.to(device);
}

}  // namespace ingot::distill
