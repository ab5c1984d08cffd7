// Bench results as the JSON object bench/compare reads and as a small table for people.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "ingot/train/bench.h"

namespace ingot::train {
namespace {

nlohmann::ordered_json spread_json(const Spread& s) {
  return nlohmann::ordered_json{{"median", s.median}, {"min", s.min}, {"max", s.max}};
}

std::string spread_row(const char* what, const Spread& s, const char* format) {
  return fmt::format("{:<26}{:>12}{:>12}{:>12}\n", what, fmt::format(fmt::runtime(format), s.median),
                     fmt::format(fmt::runtime(format), s.min), fmt::format(fmt::runtime(format), s.max));
}

double mib(int64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

}  // namespace

Spread spread_of(std::vector<double> values) {
  Spread s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  s.median = n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
  s.min = values.front();
  s.max = values.back();
  return s;
}

std::string BenchResult::to_json() const {
  nlohmann::ordered_json j;
  j["framework"] = "ingot";
  j["version"] = version;
  j["config"] = config;
  j["model"] = model;
  j["params"] = params;
  j["dtype"] = dtype;
  j["infer_dtype"] = infer_dtype;
  j["threads"] = threads;
  j["device"] = device;
  j["ops_by_backend"] = nlohmann::json::object();
  for (const auto& [name, n] : ops_by_backend) j["ops_by_backend"][name] = n;
  j["batch_size"] = batch_size;
  j["infer_batch"] = infer_batch;
  j["warmup"] = warmup;
  j["steps"] = steps;
  j["repeat"] = repeat;
  j["train"] = {{"images_per_s", spread_json(train_images_per_s)}, {"ms_per_step", spread_json(train_ms_per_step)}};
  j["inference"] = {{"images_per_s", spread_json(infer_images_per_s)},
                    {"ms_per_batch", spread_json(infer_ms_per_batch)}};
  j["latency_b1_ms"] = {{"median", latency_b1_median_ms}, {"p90", latency_b1_p90_ms}};
  j["memory"] = {{"step_peak_bytes", step_peak_bytes},
                 {"activation_bytes", activation_bytes},
                 {"peak_allocated_bytes", peak_allocated_bytes},
                 {"peak_rss_bytes", peak_rss_bytes},
                 {"train_cache_hit_rate", train_cache_hit_rate}};
  if (scaling)
    j["scaling"] = {{"memory_limit_bytes", scaling->limit_bytes},  {"max_batch", scaling->max_batch},
                    {"peak_bytes", scaling->peak_bytes},           {"next_batch", scaling->next_batch},
                    {"next_peak_bytes", scaling->next_peak_bytes}, {"trials", scaling->trials}};
  j["compile"] = {{"enabled", compiled},
                  {"graphs", compile_graphs},
                  {"train_replays", compile_train_replays},
                  {"planned_bytes", compile_planned_bytes},
                  {"fused", compile_fused},
                  {"winograd", compile_winograd},
                  {"fallback", compile_fallback}};
  j["checkpointing_segments"] = checkpointing_segments;
  if (checkpointing_segments > 0)
    j["checkpointing"] = {{"policy", checkpointing_policy},
                          {"segments", checkpointing_plan},
                          {"estimated_peak_bytes", checkpointing_estimated_peak_bytes}};
  return j.dump();
}

std::string BenchResult::table() const {
  std::string s = fmt::format("ingot bench {}: model {} ({} parameters), {}, {} threads, {}\n", config, model, params,
                              dtype, threads, backend);
  s += fmt::format("{} warm-up + {} timed steps, {} repeats\n", warmup, steps, repeat);
  s += fmt::format("{:<26}{:>12}{:>12}{:>12}\n", "", "median", "min", "max");
  s += spread_row(fmt::format("train images/s (b {})", batch_size).c_str(), train_images_per_s, "{:.1f}");
  s += spread_row("train ms/step", train_ms_per_step, "{:.3f}");
  s += spread_row(fmt::format("infer images/s (b {}, {})", infer_batch, infer_dtype).c_str(), infer_images_per_s, "{:.1f}");
  s += spread_row("infer ms/batch", infer_ms_per_batch, "{:.3f}");
  s += fmt::format("{:<26}{:>12.3f}  (p90 {:.3f})\n", "latency b1 ms", latency_b1_median_ms, latency_b1_p90_ms);
  if (compiled) {  // the arena exists before the step starts: the step's own peak leaves it out
    s += fmt::format("memory: compiled step: {:.1f} MiB planned arena (held from compilation on) and {:.1f} MiB "
                     "above the step's start\n",
                     mib(compile_planned_bytes), mib(step_peak_bytes));
  } else {
    s += fmt::format(
        "memory: step peak {:.1f} MiB above the step's start, {:.1f} MiB of it kept from forward to "
        "backward{}\n",
        mib(step_peak_bytes), mib(activation_bytes),
        checkpointing_segments > 0
            ? fmt::format(" ({} checkpointed segments, {}; estimated peak {:.1f} MiB)", checkpointing_segments,
                          checkpointing_policy, mib(checkpointing_estimated_peak_bytes))
            : "");
  }
  s += fmt::format(
      "        peak allocated {:.1f} MiB (timed training), peak RSS {:.1f} MiB, allocator cache hits "
      "{:.1f}% during timed steps\n",
      mib(peak_allocated_bytes), mib(peak_rss_bytes), 100.0 * train_cache_hit_rate);
  if (compiled)
    s += fmt::format("compile: {} graphs, {} of the training steps replayed, {} pairs fused{} and {:.1f} MiB planned "
                     "for the training graph's intermediate values{}\n",
                     compile_graphs, compile_train_replays, compile_fused,
                     compile_winograd >= 0 ? fmt::format(", {} convolutions on Winograd kernels", compile_winograd) : "",
                     mib(compile_planned_bytes),
                     compile_fallback.empty() ? "" : "; ran eager where: " + compile_fallback);
  if (scaling) {
    s += scaling->max_batch == 0
             ? fmt::format("scaling: not even batch 1 fits in {:.1f} MiB (it needs {:.1f} MiB)\n",
                           mib(scaling->limit_bytes), mib(scaling->next_peak_bytes))
             : fmt::format(
                   "scaling: the largest training batch within {:.1f} MiB is {} ({:.1f} MiB at its peak; "
                   "batch {} needs {:.1f} MiB)\n",
                   mib(scaling->limit_bytes), scaling->max_batch, mib(scaling->peak_bytes), scaling->next_batch,
                   mib(scaling->next_peak_bytes));
  }
  return s;
}

}  // namespace ingot::train
