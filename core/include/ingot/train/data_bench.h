// `ingot bench --data`: the training loader of a pipeline config alone (no model), in images per
// second for each worker count, with the process's resident memory, so that a user sees whether
// the data or the compute limits a run.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace ingot::train {

struct DataBenchOptions {
  std::string config;                  ///< pipeline YAML (its data: section and seed)
  std::vector<std::string> overrides;  ///< "dotted.key=value", applied before validation
  std::vector<int> workers;            ///< worker counts to measure; empty: 0, 1, 2, 4 up to the cores
  int64_t batches = 20;                ///< timed batches per repeat (after one untimed batch)
  int64_t repeat = 3;                  ///< repeats per worker count (each a new epoch); median reported
};

struct DataBenchRow {
  int workers = 0;
  double images_per_s = 0.0;  ///< median over the repeats
  double min_images_per_s = 0.0, max_images_per_s = 0.0;
  double ms_per_batch = 0.0;
  int64_t rss_bytes = 0;  ///< the process's resident memory after the last repeat
};

struct DataBenchResult {
  std::string dataset;
  std::string sample;  ///< one sample's shape, e.g. [3, 224, 224]
  int64_t batch_size = 0;
  int64_t images = 0;  ///< in the training split
  std::vector<DataBenchRow> rows;
  std::string to_json() const;
  std::string table() const;
};

DataBenchResult run_data_bench(const DataBenchOptions& options, std::ostream& log);

}  // namespace ingot::train
