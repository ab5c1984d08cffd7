// StageHarness: what `ingot run` builds before its stages run, without a run folder, for testing
// a pipeline stage (an extension's or a built-in one) on a small config outside a whole run.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <memory>

#include "ingot/config/config.h"
#include "ingot/tensor/device.h"
#include "ingot/train/stage.h"
#include "ingot/train/stage_context.h"

namespace ingot::train {

class StageHarness {
 public:
  /// Builds data, model (on `device`, init_from loaded), optimizer, schedule, loss, stages and
  /// callbacks from `config` as `ingot run` does, refusing what it refuses; the stages' output
  /// goes to `out`, their metrics to `metrics_file` (JSON lines).
  StageHarness(const config::Config& config, std::ostream& out, const std::filesystem::path& metrics_file,
               Device device = Device::cpu());
  ~StageHarness();
  StageHarness(const StageHarness&) = delete;
  StageHarness& operator=(const StageHarness&) = delete;

  /// What each stage gets.
  StageContext& context() { return *context_; }
  /// Runs `stage` on the context, as the pipeline runs each of its stages.
  bool run(PipelineStage& stage) { return stage.run(*context_); }
  /// Why a stage failed (StageContext::fail), or "".
  const std::string& failure() const;

 private:
  std::unique_ptr<PipelineState> state_;
  std::unique_ptr<StageContext> context_;
};

}  // namespace ingot::train
