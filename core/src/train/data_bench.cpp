// The loader alone: for each worker count, epochs of the training split's batches are read as
// fast as they come (nothing consumes them), after one untimed batch that starts the workers.
#include "ingot/train/data_bench.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <ostream>
#include <thread>

#include "ingot/base/error.h"
#include "ingot/config/overrides.h"
#include "ingot/data/data_config.h"
#include "ingot/nn/model_builder.h"
#include "ingot/train/pipeline_schema.h"

namespace ingot::train {

namespace {

/// Resident bytes of this process now (/proc/self/statm), 0 where it cannot be read.
int64_t resident_bytes() {
  std::ifstream in("/proc/self/statm");
  int64_t size = 0, resident = 0;
  if (!(in >> size >> resident)) return 0;
  return resident * static_cast<int64_t>(::sysconf(_SC_PAGESIZE));
}

std::vector<int> default_workers() {
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<int> w{0, 1};
  for (int n = 2; n <= cores; n *= 2) w.push_back(n);
  if (w.back() != cores && cores > 1) w.push_back(cores);
  return w;
}

}  // namespace

DataBenchResult run_data_bench(const DataBenchOptions& o, std::ostream& log) {
  INGOT_CHECK_AS(o.batches >= 1 && o.repeat >= 1, ConfigError, "bench --data: --steps and --repeat must be >= 1");
  const config::Config cfg = config::load_with_overrides(o.config, o.overrides, pipeline_schema());
  const uint64_t seed = static_cast<uint64_t>(cfg.seed().value_or(0));
  data::DataConfig dc = data::parse_data_config(cfg.node("data"), cfg.file());
  dc.validation_fraction = 0.0;                                           // the whole training split
  dc.input_shape = nn::model_input_shape(cfg.node("model"), cfg.file());  // what images are resized to
  const std::vector<int> workers = o.workers.empty() ? default_workers() : o.workers;
  DataBenchResult r;
  r.dataset = dc.dataset;
  r.batch_size = dc.batch_size;
  for (const int w : workers) {
    INGOT_CHECK_AS(w >= 0 && w <= 256, ConfigError, "bench --data: --workers {} must be in [0, 256]", w);
    dc.workers = w;
    data::DataLoaders loaders = data::make_data_loaders(dc, seed);
    data::DataLoader& loader = *loaders.train;
    r.sample = loader.dataset().sample_shape().str();
    r.images = loader.dataset().size();
    std::vector<double> rates, batch_ms;
    for (int64_t rep = 0; rep < o.repeat; ++rep) {
      loader.begin_epoch(rep);
      if (!loader.next()) break;  // untimed: the workers start
      const auto t0 = std::chrono::steady_clock::now();
      int64_t images = 0, batches = 0;
      while (batches < o.batches) {
        std::optional<data::Batch> b = loader.next();
        if (!b) {  // a short epoch: go on with the next one
          loader.begin_epoch(rep + o.repeat * (batches + 1));
          continue;
        }
        images += b->units();
        ++batches;
      }
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      rates.push_back(static_cast<double>(images) / s);
      batch_ms.push_back(1e3 * s / static_cast<double>(batches));
      loader.stop();
    }
    std::sort(rates.begin(), rates.end());
    std::sort(batch_ms.begin(), batch_ms.end());
    DataBenchRow row;
    row.workers = w;
    row.images_per_s = rates[rates.size() / 2];
    row.min_images_per_s = rates.front();
    row.max_images_per_s = rates.back();
    row.ms_per_batch = batch_ms[batch_ms.size() / 2];
    row.rss_bytes = resident_bytes();
    log << fmt::format("workers {}: {:.1f} images/s\n", w, row.images_per_s) << std::flush;
    r.rows.push_back(row);
  }
  return r;
}

std::string DataBenchResult::to_json() const {
  nlohmann::ordered_json j;
  j["dataset"] = dataset;
  j["sample"] = sample;
  j["batch_size"] = batch_size;
  j["images"] = images;
  j["rows"] = nlohmann::ordered_json::array();
  for (const DataBenchRow& row : rows)
    j["rows"].push_back({{"workers", row.workers},
                         {"images_per_s", row.images_per_s},
                         {"min_images_per_s", row.min_images_per_s},
                         {"max_images_per_s", row.max_images_per_s},
                         {"ms_per_batch", row.ms_per_batch},
                         {"rss_mib", static_cast<double>(row.rss_bytes) / (1024.0 * 1024.0)}});
  return j.dump();
}

std::string DataBenchResult::table() const {
  std::string s = fmt::format("data: {} ({} training images of {}), batch {}; the loader alone, no model\n", dataset,
                              images, sample, batch_size);
  s += fmt::format("{:>8}  {:>10}  {:>19}  {:>12}  {:>12}  {:>9}\n", "workers", "images/s", "(min - max)", "per worker",
                   "ms/batch", "RSS MiB");
  for (const DataBenchRow& row : rows)
    s += fmt::format("{:>8}  {:>10.1f}  {:>19}  {:>12.1f}  {:>12.2f}  {:>9.0f}\n", row.workers, row.images_per_s,
                     fmt::format("({:.1f} - {:.1f})", row.min_images_per_s, row.max_images_per_s),
                     row.images_per_s / std::max(1, row.workers), row.ms_per_batch,
                     static_cast<double>(row.rss_bytes) / (1024.0 * 1024.0));
  s += "Compare with the training images/s of `ingot bench` (or the run's progress line): the smaller limits a run.\n";
  return s;
}

}  // namespace ingot::train
