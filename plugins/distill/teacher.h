// The teacher of a distillation stage: what `teacher:` names (the pipeline's model as it stands,
// a run folder, or a weights file), built, loaded and frozen.
#pragma once

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <string>

#include "ingot/nn/module.h"
#include "ingot/tensor/device.h"

namespace ingot::distill {

enum class TeacherKind {
  Current,    ///< the pipeline's model as trained so far (state.model)
  RunFolder,  ///< a folder with config.resolved.yaml and model.safetensors (or checkpoints/)
  File,       ///< a .safetensors file; its architecture from teacher_model: or the pipeline's model:
};

struct TeacherSpec {
  TeacherKind kind = TeacherKind::Current;
  std::filesystem::path path;  ///< RunFolder / File
  YAML::Node model;            ///< File: teacher_model: (null = the pipeline's model:)
  std::string where;           ///< "FILE:LINE: stages[i].teacher" for messages
};

/// Reads `teacher:` and `teacher_model:` of a distill stage's map. ConfigError, naming the line,
/// when the folder or file does not exist, a folder has no config.resolved.yaml, a file is not
/// .safetensors, or teacher_model: is given with a teacher that is not a file.
TeacherSpec parse_teacher(const YAML::Node& stage, const std::string& file, const std::string& path);

/// A loaded teacher and where its weights came from.
struct Teacher {
  nn::ModulePtr model;
  std::string source;  ///< the file its weights were read from
};

/// Builds a RunFolder or File teacher and loads its weights (strictly). A run folder's model is
/// its config.resolved.yaml's model:, its weights model.safetensors or, when there is none or it
/// holds a model that a later stage of that run changed (a distilled student, a pruned model),
/// its newest checkpoint (the one checkpoints/latest names first). A file (plain weights or an
/// Ingot checkpoint) is read as spec.model, or as `pipeline_model` (from `pipeline_file`) when
/// spec.model is null. InputError naming the stage's line and each file tried when none fits.
Teacher load_teacher(const TeacherSpec& spec, const YAML::Node& pipeline_model, const std::string& pipeline_file);

/// Freezes `teacher` for distillation: no parameter requires grad, eval mode (BatchNorm's running
/// statistics, no dropout), moved to `device`.
void freeze_teacher(nn::Module& teacher, Device device);

}  // namespace ingot::distill
