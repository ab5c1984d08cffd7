// Pipeline stages by `type:` (the `stages:` list): train, evaluate, save, and any an extension
// plugin adds (quantize, prune, distill, export, ...). Stages run in the listed order; each sees
// the run through its StageContext (ingot/train/stage_context.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ingot/config/type_registry.h"
#include "ingot/io/safetensors.h"
#include "ingot/nn/module.h"
#include "ingot/train/stage_context.h"

namespace ingot::train {

class PipelineStage {
 public:
  virtual ~PipelineStage() = default;
  /// The stage's type name, as listed in `stages:`.
  virtual std::string name() const = 0;
  /// True for a stage that trains: the pipeline then keeps checkpoints and resumes into it.
  virtual bool trains() const { return false; }
  /// True for a stage that changes the model's weights or structure (train, distill, prune,
  /// quantize): with `report: {stages: true}` the pipeline measures the model after it.
  virtual bool changes_model() const { return trains(); }
  /// True for a stage every rank of a distributed run may run (`parallel:`): it keeps the ranks'
  /// models equal and writes files only where StageContext::writes_files(). Off unless a stage
  /// says so; train, evaluate and save do.
  virtual bool runs_distributed() const { return false; }
  /// Runs the stage; false stops the pipeline (training interrupted by a signal, or
  /// context.fail() called).
  virtual bool run(StageContext& context) = 0;
  /// For a model saved after the run (`ingot predict`, `ingot export`): a stage that changed the
  /// model's structure redoes that change on `model` — built from the config, the earlier stages'
  /// changes applied — e.g. distill puts its student in its place. It may also load `weights`
  /// itself (quantize swaps in the int8 layers the file describes and loads them): it then returns
  /// true, and nothing else loads the file. The default changes nothing and returns false.
  virtual bool prepare_saved(nn::ModulePtr& /*model*/, const io::SafetensorsFile& /*weights*/) const { return false; }
};

using StageRegistry = config::TypeRegistry<std::unique_ptr<PipelineStage>>;

/// The process's stage registry, built-ins included.
StageRegistry& stage_registry();

/// The `stages:` list: each entry a type name or a map with `type:` and that stage's keys;
/// absent = train, evaluate, save.
std::vector<std::unique_ptr<PipelineStage>> make_stages(const YAML::Node& node, const std::string& file);

}  // namespace ingot::train
