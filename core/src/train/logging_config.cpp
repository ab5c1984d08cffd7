// `logging:`: its schema, parsing, and the sinks it attaches to the run's metrics log.
#include "ingot/train/logging_config.h"

#include <memory>

#include "ingot/train/csv_log.h"
#include "ingot/train/metrics_log.h"
#include "ingot/train/tensorboard_writer.h"

namespace ingot::train {

config::Schema logging_schema() {
  config::Schema s;
  s.boolean("tensorboard").boolean("csv");
  return s;
}

LoggingConfig parse_logging_config(const YAML::Node& node, const std::string& file) {
  LoggingConfig c;
  if (!node || node.IsNull()) return c;
  logging_schema().validate(node, file, "logging");
  if (node["tensorboard"]) c.tensorboard = node["tensorboard"].as<bool>();
  if (node["csv"]) c.csv = node["csv"].as<bool>();
  return c;
}

void attach_run_logs(MetricsLog& metrics, const LoggingConfig& config, const std::filesystem::path& run_dir,
                     std::optional<int64_t> resume_step) {
  if (config.csv) metrics.add_sink(std::make_unique<CsvLog>(run_dir / "metrics.csv", resume_step));
  if (config.tensorboard) metrics.add_sink(std::make_unique<TensorBoardWriter>(run_dir / "tensorboard"));
}

}  // namespace ingot::train
