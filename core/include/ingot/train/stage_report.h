// The per-stage table of a pipeline that changes its model (train a teacher, distill a student,
// prune, quantize): after each stage that changes the model, its accuracy, weights (all and
// non-zero), bytes on disk, batch-1 latency and large-batch throughput. Printed at the end and
// written to runs/<name>/compression.md. Config: `report: {stages: true, ...}`. A pipeline whose
// first stage does not train (its model comes from init_from) measures that model first ("start").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ingot/config/schema.h"

namespace ingot::train {

/// `report:` (top level).
struct ReportConfig {
  bool stages = false;             ///< measure after every stage that changes the model
  int64_t latency_iters = 50;      ///< batch-1 forwards timed (median reported)
  int64_t throughput_batch = 256;  ///< batch of the images/s measurement
  int64_t throughput_iters = 10;   ///< batches timed (median reported)
};
config::Schema report_schema();
ReportConfig parse_report_config(const YAML::Node& node, const std::string& file);

/// One row of the table.
struct StageRow {
  std::string stage;            ///< the stage's name ("train", "distill", "prune", "quantize")
  double accuracy = 0.0;        ///< on the test split, 0..1
  int64_t weights = 0;          ///< elements of every weight and bias (int8 ones included)
  int64_t nonzero_weights = 0;  ///< of which non-zero
  int64_t bytes_on_disk = 0;    ///< the model's safetensors file as saved after the stage
  double latency_b1_ms = 0.0;   ///< median forward time of one sample
  double images_per_s = 0.0;    ///< at `batch`
  int64_t batch = 0;
  std::string note;  ///< what the stage did ("int8 static: 4 of 4 layers", ...)
};

/// The table as markdown, ratios against the first row.
std::string stage_table_markdown(const std::vector<StageRow>& rows);

}  // namespace ingot::train
