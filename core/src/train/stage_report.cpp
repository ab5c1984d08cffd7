// The per-stage table: after each stage that changes the model, accuracy, weights, bytes on
// disk, batch-1 latency and throughput; compression.md at the end.
#include "ingot/train/stage_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <ostream>

#include "ingot/base/grad_mode.h"
#include "ingot/io/safetensors.h"
#include "ingot/ops/random.h"
#include "ingot/runtime/device_memory.h"
#include "ingot/train/bench.h"
#include "pipeline_state.h"

namespace ingot::train {
namespace {

using Clock = std::chrono::steady_clock;

/// Median milliseconds of one forward of `x` (the result brought to a strided layout, the device
/// synchronised), after `warmup` untimed ones.
double forward_ms(nn::Module& model, const Tensor& x, int64_t iters, int64_t warmup) {
  const Device device = model.device();
  for (int64_t i = 0; i < warmup; ++i) (void)model(x).strided();
  synchronize(device);
  std::vector<double> ms;
  for (int64_t i = 0; i < iters; ++i) {
    const auto t0 = Clock::now();
    (void)model(x).strided();
    synchronize(device);
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  return spread_of(std::move(ms)).median;
}

/// True for the state_dict names that are a layer's weights or bias (not running statistics,
/// step counters or quantization parameters).
bool is_weight(const std::string& name) {
  const auto dot = name.rfind('.');
  const std::string leaf = dot == std::string::npos ? name : name.substr(dot + 1);
  return leaf == "weight" || leaf == "bias";
}

std::string ratio(double a, double b) { return b > 0.0 ? fmt::format("{:.2f}x", a / b) : std::string("-"); }

}  // namespace

config::Schema report_schema() {
  config::Schema s;
  s.boolean("stages").integer("latency_iters", 1, 1e6).integer("throughput_batch", 1, 1e6);
  s.integer("throughput_iters", 1, 1e6);
  return s;
}

ReportConfig parse_report_config(const YAML::Node& node, const std::string& file) {
  ReportConfig c;
  if (!node || node.IsNull()) return c;
  report_schema().validate(node, file, "report");
  if (node["stages"]) c.stages = node["stages"].as<bool>();
  if (node["latency_iters"]) c.latency_iters = node["latency_iters"].as<int64_t>();
  if (node["throughput_batch"]) c.throughput_batch = node["throughput_batch"].as<int64_t>();
  if (node["throughput_iters"]) c.throughput_iters = node["throughput_iters"].as<int64_t>();
  return c;
}

const StageRow& measure_stage(PipelineState& s, const std::string& stage) {
  nn::Module& model = *s.model;
  StageRow row;
  row.stage = stage;
  row.note = std::move(s.stage_note);
  s.stage_note.clear();
  row.accuracy = s.evaluate_now().accuracy;

  const nn::StateDict state = model.state_dict();
  for (const auto& [name, t] : state) {
    if (!is_weight(name)) continue;
    row.weights += t.numel();
    const std::vector<double> v = t.to_vector<double>();
    row.nonzero_weights += std::count_if(v.begin(), v.end(), [](double x) { return x != 0.0; });
  }
  const std::filesystem::path dir = s.run->path() / "stages";
  std::filesystem::create_directories(dir);
  const std::filesystem::path file = dir / fmt::format("{}_{}.safetensors", s.stage_rows.size(), stage);
  io::save_safetensors(file, state, io::Metadata{{"format", "pt"}, {"stage", stage}});
  row.bytes_on_disk = static_cast<int64_t>(std::filesystem::file_size(file));

  const bool was_training = model.is_training();
  model.eval();
  {
    const NoGradGuard no_grad;
    Shape one{1};
    for (int64_t d : s.loaders.test->dataset().sample_shape()) one.push_back(d);
    Shape big = one;
    big[0] = s.report.throughput_batch;
    Generator gen(s.seed + 17);
    const Device device = model.device();
    row.latency_b1_ms = forward_ms(model, randn(one, DType::F32, &gen).to(device), s.report.latency_iters, 5);
    const double ms = forward_ms(model, randn(big, DType::F32, &gen).to(device), s.report.throughput_iters, 2);
    row.batch = s.report.throughput_batch;
    row.images_per_s = ms > 0.0 ? 1000.0 * static_cast<double>(row.batch) / ms : 0.0;
  }
  model.train(was_training);

  Record rec("stage_report", s.position.epoch, s.position.step);
  rec.set("stage", stage).set("accuracy", row.accuracy).set("weights", row.weights);
  rec.set("nonzero_weights", row.nonzero_weights).set("bytes_on_disk", row.bytes_on_disk);
  rec.set("latency_b1_ms", row.latency_b1_ms).set("images_per_s", row.images_per_s).set("batch", row.batch);
  if (!row.note.empty()) rec.set("note", row.note);
  s.metrics->log(rec);
  s.out << fmt::format(
      "report: {} accuracy {:.2f}%, {} weights ({} non-zero), {} bytes on disk, batch-1 {:.3f} ms, "
      "{:.0f} img/s at batch {}\n",
      stage, 100.0 * row.accuracy, row.weights, row.nonzero_weights, row.bytes_on_disk, row.latency_b1_ms,
      row.images_per_s, row.batch);
  s.stage_rows.push_back(std::move(row));
  return s.stage_rows.back();
}

std::string stage_table_markdown(const std::vector<StageRow>& rows) {
  std::string out =
      "| # | stage | accuracy | weights | non-zero | bytes on disk | smaller | batch-1 latency | faster | images/s "
      "| faster | what it did |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  if (rows.empty()) return out;
  const StageRow& base = rows.front();
  for (size_t i = 0; i < rows.size(); ++i) {
    const StageRow& r = rows[i];
    out += fmt::format(
        "| {} | {} | {:.2f}% ({:+.2f}) | {} | {} | {} | {} | {:.3f} ms | {} | {:.0f} (batch {}) | {} | {} |\n", i,
        r.stage, 100.0 * r.accuracy, 100.0 * (r.accuracy - base.accuracy), r.weights, r.nonzero_weights,
        r.bytes_on_disk, ratio(static_cast<double>(base.bytes_on_disk), static_cast<double>(r.bytes_on_disk)),
        r.latency_b1_ms, ratio(base.latency_b1_ms, r.latency_b1_ms), r.images_per_s, r.batch,
        ratio(r.images_per_s, base.images_per_s), r.note.empty() ? "-" : r.note);
  }
  return out;
}

}  // namespace ingot::train
