// ParallelConfig: the `parallel:` section of a pipeline — how a run spreads over processes:
// none, ddp (data parallel, gradients averaged in buckets), or pipeline (a Sequential split
// across ranks, GPipe micro-batches).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "ingot/config/schema.h"

namespace ingot::parallel {

struct ParallelConfig {
  std::string mode = "none";        ///< none | ddp | pipeline
  std::string backend = "auto";     ///< communicator: auto (nccl on CUDA, else gloo) or a name
  double bucket_mb = 25.0;          ///< ddp: gradient bucket cap
  bool find_unused_parameters = false;
  bool broadcast_buffers = true;    ///< ddp: rank 0's buffers (BatchNorm statistics) before each step
  bool sync_batchnorm = false;      ///< ddp: BatchNorm statistics over the global batch
  std::vector<int64_t> stages;      ///< pipeline: layers of the model's Sequential per rank
  int64_t micro_batches = 1;        ///< pipeline: micro-batches per batch
  double timeout_s = 300.0;         ///< how long a rank waits for the others (bootstrap, collectives)
  /// `ingot run` starts the ranks itself: "auto" (one per visible device of the run's backend; one
  /// on a CPU) or a count ("4": four ranks, on a CPU each with its share of the cores). Empty: the
  /// ranks are started by a launcher (ingot launch, torchrun, Slurm) or the run has one process.
  std::string devices;
  bool enabled() const { return mode != "none"; }
};

config::Schema parallel_schema();
/// Validates and reads `parallel:` (absent = mode none); ConfigError names the key and line.
ParallelConfig parse_parallel_config(const YAML::Node& node, const std::string& file);
/// `devices` as a rank count: "auto" is `visible` (the devices of the run's backend; 1 on a
/// CPU), a number is itself. ConfigError naming `where` for anything else.
int rank_count(const std::string& devices, int visible, const std::string& where);
/// The communicator a backend choice means on a device kind ("gloo" on cpu, "nccl" on cuda).
std::string communicator_name(const ParallelConfig& config, bool cuda);

}  // namespace ingot::parallel
