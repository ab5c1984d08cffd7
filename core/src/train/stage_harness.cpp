// A pipeline built as `ingot run` builds it, with metrics and a progress bar and no run folder.
#include "ingot/train/stage_harness.h"

#include "ingot/parallel/parallel_config.h"
#include "pipeline_state.h"

namespace ingot::train {

StageHarness::StageHarness(const config::Config& config, std::ostream& out, const std::filesystem::path& metrics_file,
                           Device device)
    : state_(build_pipeline(config, device, out, parallel::ParallelConfig{}, nullptr)) {
  state_->metrics = std::make_unique<MetricsLog>(metrics_file, /*append=*/false);
  state_->progress = std::make_unique<ProgressBar>(out, /*tty=*/false);
  state_->position.rng = state_->dropout_gen.state();
  context_ = std::make_unique<StageContext>(*state_);
}

StageHarness::~StageHarness() = default;

const std::string& StageHarness::failure() const { return state_->failure; }

}  // namespace ingot::train
