// The `distill` pipeline stage: trains a student model (its own `student:` model section) to match
// a frozen teacher's softened outputs as well as the labels, then makes the student the pipeline's
// model.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

#include "ingot/config/schema.h"
#include "ingot/train/stage.h"
#include "teacher.h"

namespace ingot::distill {

/// A validated distill stage.
struct DistillConfig {
  TeacherSpec teacher;
  YAML::Node student;  ///< a model: section
  double temperature = 4.0;
  double alpha = 0.9;    ///< weight of the soft-target term; 1 - alpha weighs the labels' loss
  YAML::Node fine_tune;  ///< train:-like keys over the pipeline's train: (null = none)
  std::string file;      ///< the config file, for messages
  std::string path;      ///< "stages[i]"
};

/// Keys: teacher (required), teacher_model, student (required), temperature, alpha, fine_tune.
config::Schema distill_schema();

/// Reads a stage map that distill_schema() accepted: temperature > 0 and 0 <= alpha <= 1, the
/// teacher as parse_teacher reads it, and the student section built once (with a scratch
/// generator) so that its mistakes are refused before the run starts. ConfigError naming the line.
DistillConfig parse_distill_config(const YAML::Node& node, const std::string& file, const std::string& path);

class DistillStage final : public train::PipelineStage {
 public:
  explicit DistillStage(DistillConfig config) : config_(std::move(config)) {}
  std::string name() const override { return "distill"; }
  bool changes_model() const override { return true; }
  /// Loads and freezes the teacher, builds the student on the model's device (checked against the
  /// data and the teacher's outputs), fine-tunes it with the distillation loss, and makes it
  /// state.model. False when training was interrupted or failed.
  bool run(train::StageContext& context) override;
  /// The student (built from `student:`) takes the model's place.
  bool prepare_saved(nn::ModulePtr& model, const io::SafetensorsFile& weights) const override;

 private:
  DistillConfig config_;
};

}  // namespace ingot::distill
