// `logging:` (top level): the run's logs besides metrics.jsonl and console.log —
// `logging: {tensorboard: false, csv: false}` turns on runs/<name>/tensorboard/ event files and
// runs/<name>/metrics.csv, both fed by the metrics log (rank 0 alone writes them).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "ingot/config/schema.h"

namespace ingot::train {

class MetricsLog;

/// `logging:` (top level).
struct LoggingConfig {
  bool tensorboard = false;  ///< runs/<name>/tensorboard/events.out.tfevents.<time>.<host>
  bool csv = false;          ///< runs/<name>/metrics.csv
};
config::Schema logging_schema();
/// Validates and reads `logging:`; an absent or empty section is the defaults (both off).
LoggingConfig parse_logging_config(const YAML::Node& node, const std::string& file);

/// Attaches the sinks `config` turns on to `metrics` (the log of the run folder `run_dir`).
/// `resume_step`: the step a resumed run restarts from (metrics.csv keeps the rows up to it);
/// empty for a new run.
void attach_run_logs(MetricsLog& metrics, const LoggingConfig& config, const std::filesystem::path& run_dir,
                     std::optional<int64_t> resume_step);

}  // namespace ingot::train
