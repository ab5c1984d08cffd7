// A whole pipeline run (`ingot run`): builds data, model, optimizer and schedule from a config,
// opens runs/<name>/, resumes from its latest checkpoint when asked, and runs the stages of the
// stage registry in order (train, evaluate, save, ...), writing metrics, checkpoints and a summary.
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>

#include "ingot/config/backend_select.h"
#include "ingot/config/config.h"
#include "ingot/nn/module.h"
#include "ingot/ops/random.h"

namespace ingot::train {

struct RunOptions {
  bool resume = false;   ///< continue runs/<name>/ from its latest checkpoint
  bool force = false;    ///< start over, moving an existing runs/<name>/ aside
  int64_t keep_old = 2;  ///< with force: copies moved aside that are kept (the newest; 0 = all)
  /// Track tensors; at the end print the memory report and write runs/<name>/memory.md.
  bool memory_report = false;
  std::filesystem::path runs_dir = "runs";
  /// Printed first (the CLI's config and backend lines), so the console log holds it too.
  std::string preamble;
};

/// Runs the pipeline of `config` on the backends of `backends`, printing progress to `out`.
/// Returns the process exit code: 0, or 130 / 143 when SIGINT / SIGTERM stopped training (after
/// saving a checkpoint). Errors are thrown (ConfigError / InputError: exit 2).
int run_pipeline(const config::Config& config, const config::BackendSelection& backends, const RunOptions& options,
                 std::ostream& out);

/// Loads the config's `init_from:` (a safetensors path, strict; or {path, strict, prefix_map,
/// ignore}: train/init_from.h) into `model`; returns what was loaded ("" without init_from). A
/// mismatch is an InputError naming the config line and the file.
std::string load_init_from(const config::Config& config, nn::Module& model);

/// The config's model: built (weights from `init_gen`, dropout masks from `dropout_gen`), its
/// `init_from:` weights loaded (what was loaded in `init_report`, if given), moved to `device`.
/// `defaults`: model keys the data sets (a preset's classes; a language model's vocab_size; a
/// BERT's pad_id), where the config leaves them out.
/// What `ingot run` and `ingot bench` share.
nn::ModulePtr build_model_on(const config::Config& config, Device device, Generator& init_gen, Generator& dropout_gen,
                             std::string* init_report = nullptr, const std::map<std::string, int64_t>& defaults = {});

/// True when the config asks for a pipeline (data, model, train or stages) rather than only the
/// smoke check of the backends.
bool is_pipeline(const config::Config& config);

}  // namespace ingot::train
