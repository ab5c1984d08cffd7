// `ingot bench`: times the training step, batched inference and batch-1 latency of a pipeline
// config's model on random in-memory data, with the allocator's and the process's peak memory.
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace ingot::train {

/// What to measure and how often.
struct BenchOptions {
  std::string config;  ///< pipeline YAML (model, train.optimizer, data.batch_size, threads, seed, backend)
  std::vector<std::string> overrides;  ///< "dotted.key=value", applied before validation
  int64_t warmup = 5;                  ///< untimed steps (and forwards) before each measurement
  int64_t steps = 20;                  ///< timed training steps, and inference batches, per repeat
  int64_t repeat = 3;                  ///< each measurement this many times; median, min and max reported
  std::optional<int64_t> batch_size;   ///< training batch; default data.batch_size
  int64_t infer_batch = 256;
  int64_t latency_iters = 100;                       ///< single-image forwards per repeat
  std::string infer_dtype = "f32";  ///< inference and latency in "f32" or "bf16" (the model cast after training)
  std::optional<int> threads;                        ///< default: the config's threads, else the usual budget
  std::filesystem::path save_init;                   ///< when set: the initial weights as safetensors (torch names)
  std::optional<std::filesystem::path> profile_dir;  ///< when set: profile the timed training steps
  /// when set: also find the largest training batch whose step stays within this many bytes
  /// allocated on the device (weights, gradients, optimizer state, the batch and the step's peak)
  std::optional<int64_t> scaling_limit;
  /// --compile (or the config's train.compile): training steps, inference batches and batch-1
  /// forwards run as captured graphs (docs/compile.md)
  bool compile = false;
  std::filesystem::path dump_graph;  ///< --dump-graph DIR: the graphs before and after each pass
};

/// "200MiB", "1.5GiB", "300MB", "4096" (bytes) as bytes; ConfigError naming `flag` otherwise.
int64_t parse_memory_size(const std::string& text, const std::string& flag);

/// `--scaling`: the largest batch that fits the limit, and what it and the next batch need.
struct ScalingResult {
  int64_t limit_bytes = 0;
  int64_t max_batch = 0;        ///< 0: not even batch 1 fits
  int64_t peak_bytes = 0;       ///< allocated at the peak of a step at max_batch
  int64_t next_batch = 0;       ///< the smallest batch found not to fit
  int64_t next_peak_bytes = 0;  ///< what it needed
  int64_t trials = 0;           ///< training steps taken to find them
};

/// Median and range over the repeats.
struct Spread {
  double median = 0.0;
  double min = 0.0;
  double max = 0.0;
};
/// Spread of `values` (empty: zeros).
Spread spread_of(std::vector<double> values);

struct BenchResult {
  std::string version;
  std::string config;
  std::string model;  ///< the preset's name, or "layers"
  int64_t params = 0;
  std::string dtype = "f32";        ///< of the training steps
  std::string infer_dtype = "f32";  ///< of inference and batch-1 latency
  std::string backend;  ///< device and enabled backends, for the human table
  std::string device;   ///< where the model's tensors were during the measurement
  std::vector<std::pair<std::string, int64_t>> ops_by_backend;  ///< ops each backend executed
  int threads = 1;
  int64_t batch_size = 0;
  int64_t infer_batch = 0;
  int64_t warmup = 0;
  int64_t steps = 0;
  int64_t repeat = 0;
  Spread train_images_per_s;
  Spread train_ms_per_step;
  Spread infer_images_per_s;
  Spread infer_ms_per_batch;
  double latency_b1_median_ms = 0.0;
  double latency_b1_p90_ms = 0.0;
  int64_t peak_allocated_bytes = 0;   ///< the device's allocator, from the first timed training step on
  int64_t peak_rss_bytes = 0;         ///< the process's peak resident set
  double train_cache_hit_rate = 0.0;  ///< allocator cache hits / allocations during timed steps
  /// Bytes allocated from the start of a training step to the end of its forward and loss: what
  /// the graph keeps for backward (one untimed step before the timed ones; bench/compare's
  /// activation memory).
  int64_t activation_bytes = 0;
  int64_t step_peak_bytes = 0;         ///< that step's peak allocated during forward and backward, above its start
  int64_t checkpointing_segments = 0;  ///< segments of the checkpoint plan applied (0: off)
  std::string checkpointing_policy;    ///< "balanced" (train.checkpointing.segments) or "blocks"
  std::vector<std::string> checkpointing_plan;     ///< each segment's units (CheckpointPlan::names)
  int64_t checkpointing_estimated_peak_bytes = 0;  ///< the plan's estimate of the activation peak
  std::optional<ScalingResult> scaling;            ///< with BenchOptions::scaling_limit
  /// With --compile: what ran as a replayed graph, and why anything did not.
  bool compiled = false;
  int64_t compile_graphs = 0;          ///< graphs compiled (training, inference, batch 1)
  int64_t compile_train_replays = 0;   ///< training steps replayed (the others ran eager or were captured)
  int64_t compile_planned_bytes = 0;   ///< the training graph's planned arena
  int64_t compile_fused = 0;           ///< pairs fused in the training graph
  int64_t compile_winograd = -1;       ///< its convolutions on Winograd kernels (-1: the pass was off)
  std::string compile_fallback;        ///< the first reason a step ran eager ("" when none did)

  /// One JSON object, the schema bench/compare reads (also produced there for PyTorch).
  std::string to_json() const;
  /// A small human-readable table.
  std::string table() const;
};

/// Loads the config (with overrides), builds model and optimizer, and measures. Progress lines
/// go to `log`. Throws ConfigError (exit 2) for bad options or config, like `ingot run`.
BenchResult run_bench(const BenchOptions& options, std::ostream& log);

}  // namespace ingot::train
