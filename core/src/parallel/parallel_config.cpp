// ParallelConfig: schema and parsing of `parallel:`.
#include "ingot/parallel/parallel_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "ingot/base/error.h"

namespace ingot::parallel {

config::Schema parallel_schema() {
  config::Schema s;
  s.string("mode", false, {"none", "ddp", "pipeline"})
      .string("backend")
      .number("bucket_mb", 0.001, 4096)
      .boolean("find_unused_parameters")
      .boolean("broadcast_buffers")
      .boolean("sync_batchnorm")
      .integer("micro_batches", 1, 4096)
      .number("timeout_s", 1, 86400);
  config::Field devices;
  devices.key = "devices";
  devices.help = "ranks `ingot run` starts itself: auto (one per visible device) or a count";
  s.add(devices);
  config::Field stages;
  stages.key = "stages";
  stages.type = config::FieldType::List;
  stages.help = "pipeline mode: how many of the model's layers each rank holds, in rank order";
  s.add(stages);
  return s;
}

ParallelConfig parse_parallel_config(const YAML::Node& node, const std::string& file) {
  ParallelConfig c;
  if (!node || node.IsNull()) return c;
  parallel_schema().validate(node, file, "parallel");
  if (node["mode"]) c.mode = node["mode"].as<std::string>();
  if (node["backend"]) c.backend = node["backend"].as<std::string>();
  if (node["bucket_mb"]) c.bucket_mb = node["bucket_mb"].as<double>();
  if (node["find_unused_parameters"]) c.find_unused_parameters = node["find_unused_parameters"].as<bool>();
  if (node["broadcast_buffers"]) c.broadcast_buffers = node["broadcast_buffers"].as<bool>();
  if (node["sync_batchnorm"]) c.sync_batchnorm = node["sync_batchnorm"].as<bool>();
  if (node["micro_batches"]) c.micro_batches = node["micro_batches"].as<int64_t>();
  if (node["timeout_s"]) c.timeout_s = node["timeout_s"].as<double>();
  if (node["devices"]) {
    c.devices = node["devices"].Scalar();
    rank_count(c.devices, 1, fmt::format("{}:{}: parallel.devices", file, node["devices"].Mark().line + 1));
    INGOT_CHECK_AS(c.mode != "pipeline", ConfigError,
                   "{}:{}: parallel.devices starts data-parallel ranks; mode pipeline is started with ingot launch",
                   file, node["devices"].Mark().line + 1);
  }
  if (const YAML::Node st = node["stages"]) {
    for (const YAML::Node& k : st) {
      int64_t v = 0;
      try {
        v = k.as<int64_t>();
      } catch (const YAML::Exception&) {
        v = 0;
      }
      INGOT_CHECK_AS(v >= 1, ConfigError, "{}:{}: parallel.stages: each entry is a number of layers >= 1, got '{}'",
                     file, k.Mark().line + 1, k.Scalar());
      c.stages.push_back(v);
    }
  }
  const auto line = [&](const char* key) { return node[key] ? node[key].Mark().line + 1 : node.Mark().line + 1; };
  INGOT_CHECK_AS(c.mode == "pipeline" || (c.stages.empty() && !node["micro_batches"]), ConfigError,
                 "{}:{}: parallel.stages and parallel.micro_batches belong to mode: pipeline (mode is {})", file,
                 line(node["stages"] ? "stages" : "micro_batches"), c.mode);
  INGOT_CHECK_AS(c.mode != "pipeline" || c.stages.size() >= 2, ConfigError,
                 "{}:{}: parallel.stages: mode pipeline needs the layer count of every rank's part (two or more), "
                 "e.g. stages: [4, 3]",
                 file, line("mode"));
  return c;
}

int rank_count(const std::string& devices, int visible, const std::string& where) {
  if (devices == "auto") return std::max(visible, 1);
  int n = 0;
  const auto [end, ec] = std::from_chars(devices.data(), devices.data() + devices.size(), n);
  INGOT_CHECK_AS(ec == std::errc{} && end == devices.data() + devices.size() && n >= 1 && n <= 1024, ConfigError,
                 "{}: '{}' is not auto or a number of ranks (1 to 1024)", where, devices);
  return n;
}

std::string communicator_name(const ParallelConfig& config, bool cuda) {
  if (config.backend == "auto") return cuda ? "nccl" : "gloo";
  return config.backend;
}

}  // namespace ingot::parallel
