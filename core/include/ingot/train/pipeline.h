// A whole pipeline run (`ingot run`): builds data, model, optimizer and schedule from a config,
// opens runs/<name>/, resumes from its latest checkpoint when asked, and runs the stages
// (train, evaluate, save), writing metrics, checkpoints and a summary as it goes.
#pragma once

#include <filesystem>
#include <iosfwd>

#include "ingot/config/backend_select.h"
#include "ingot/config/config.h"
#include "ingot/nn/module.h"

namespace ingot::train {

struct RunOptions {
  bool resume = false;  ///< continue runs/<name>/ from its latest checkpoint
  bool force = false;   ///< start over, moving an existing runs/<name>/ aside
  std::filesystem::path runs_dir = "runs";
};

/// Runs the pipeline of `config` on the backends of `backends`, printing progress to `out`.
/// Returns the process exit code: 0, or 130 / 143 when SIGINT / SIGTERM stopped training (after
/// saving a checkpoint). Errors are thrown (ConfigError / InputError: exit 2).
int run_pipeline(const config::Config& config, const config::BackendSelection& backends, const RunOptions& options,
                 std::ostream& out);

/// Loads the config's `init_from:` safetensors file (if any) into `model`, strictly; a state-dict
/// mismatch is an InputError naming the config line and the file.
void load_init_from(const config::Config& config, nn::Module& model);

/// True when the config asks for a pipeline (data, model, train or stages) rather than only the
/// smoke check of the backends.
bool is_pipeline(const config::Config& config);

}  // namespace ingot::train
