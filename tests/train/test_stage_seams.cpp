// The seams compression stages stand on: a stage that replaces the pipeline's model and trains it
// through fine_tune (its own optimizer, the `fine_tune:` keys over `train:`, records tagged with
// the stage), and the per-stage table (`report: {stages: true}`, compression.md).
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <csignal>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "ingot/config/config.h"
#include "ingot/nn/model_builder.h"
#include "ingot/train/fine_tune.h"
#include "ingot/train/interrupt.h"
#include "ingot/train/pipeline.h"
#include "ingot/train/pipeline_schema.h"
#include "ingot/train/stage.h"
#include "ingot/train/stage_report.h"
#include "temp_dir.h"

namespace ingot::train {
namespace {

using Catch::Matchers::Contains;
using Json = nlohmann::json;

/// Replaces the model by a fresh MLP of `hidden` units and fine-tunes it with the stage's keys.
class SwapAndTune final : public PipelineStage {
 public:
  explicit SwapAndTune(YAML::Node keys) : keys_(YAML::Clone(keys)) {}
  std::string name() const override { return "swap_and_tune"; }
  bool changes_model() const override { return true; }
  bool run(StageContext& s) override {
    YAML::Node spec = YAML::Load("{preset: mlp, input_shape: [1, 4, 4], sizes: [16, 6, 3]}");
    nn::ModulePtr model = nn::build_model(spec, "test", s.init_generator(), &s.dropout_generator());
    const TrainConfig cfg = fine_tune_config(s, keys_["fine_tune"]);
    seen_steps = cfg.steps;
    seen_lr = cfg.optimizer["lr"].as<double>();
    if (fine_tune(s, *model, cfg, {}, name()) != TrainStatus::Finished) return false;
    s.replace_model(model);
    s.set_note("swapped in a 6-unit MLP");
    return true;
  }
  static inline int64_t seen_steps = 0;
  static inline double seen_lr = 0.0;

 private:
  YAML::Node keys_;
};

/// Fine-tunes the model and raises SIGINT's flag after its first optimizer step, as a Ctrl-C would.
class InterruptedTune final : public PipelineStage {
 public:
  std::string name() const override { return "interrupted_tune"; }
  bool changes_model() const override { return true; }
  bool run(StageContext& s) override {
    struct Interrupt final : TrainCallback {
      const char* name() const override { return "interrupt"; }
      void after_optimizer_step(TrainState&) override { set_interrupt(SIGINT); }
    } interrupt;
    const TrainConfig cfg = fine_tune_config(s, YAML::Load("{steps: 5}"));
    return fine_tune(s, s.model(), cfg, {&interrupt}, name()) == TrainStatus::Finished;
  }
};

void register_test_stage() {
  if (!stage_registry().has("interrupted_tune"))
    stage_registry().add({"interrupted_tune", config::Schema(),
                          [](const YAML::Node&, const std::string&) -> std::unique_ptr<PipelineStage> {
                            return std::make_unique<InterruptedTune>();
                          },
                          "test stage"});
  if (stage_registry().has("swap_and_tune")) return;
  config::Schema keys;
  keys.section("fine_tune", fine_tune_schema());
  stage_registry().add({"swap_and_tune", keys,
                        [](const YAML::Node& node, const std::string&) -> std::unique_ptr<PipelineStage> {
                          return std::make_unique<SwapAndTune>(node);
                        },
                        "test stage"});
}

/// Runs the pipeline of `cfg` on the reference backend with its run folder under `dir`.
int run_on_reference(const config::Config& cfg, const test::TempDir& dir, std::ostream& out) {
  RunOptions options;
  options.runs_dir = dir.path();
  const config::BackendSelection cpu{"reference", Device::cpu(), {"reference"}, ""};
  return run_pipeline(cfg, cpu, options, out);
}

std::vector<Json> records(const std::filesystem::path& metrics, const std::string& event) {
  std::vector<Json> out;
  std::istringstream in(test::read_text(metrics));
  for (std::string line; std::getline(in, line);)
    if (const Json j = Json::parse(line); j["event"] == event) out.push_back(j);
  return out;
}

TEST_CASE("a stage replaces the model, fine-tunes it with its own keys, and the table measures each stage",
          "[train][stages]") {
  register_test_stage();
  const config::Config cfg = config::Config::parse(R"(
name: seams
threads: 1
report: {stages: true, latency_iters: 3, throughput_batch: 8, throughput_iters: 2}
data:
  dataset: synthetic
  batch_size: 16
  workers: 0
  synthetic: {size: 64, test_size: 32, channels: 1, height: 4, width: 4, classes: 3}
model: {preset: mlp, input_shape: [1, 4, 4], sizes: [16, 12, 3]}
train: {epochs: 1, optimizer: {type: sgd, lr: 0.1}, scheduler: {type: constant}}
stages:
  - train
  - {type: swap_and_tune, fine_tune: {steps: 3, optimizer: {type: sgd, lr: 0.05}}}
  - evaluate
  - save
)",
                                                   pipeline_schema(), "seams.yaml");
  test::TempDir dir;
  std::ostringstream out;
  REQUIRE(run_on_reference(cfg, dir, out) == 0);
  INFO(out.str());
  CHECK(SwapAndTune::seen_steps == 3);
  CHECK(SwapAndTune::seen_lr == 0.05);
  const auto run = dir.path() / "seams";
  // The fine-tuning's steps are tagged with the stage; the train stage's are not.
  int tagged = 0, untagged = 0;
  for (const Json& r : records(run / "metrics.jsonl", "train_step")) (r.contains("stage") ? tagged : untagged)++;
  CHECK(tagged >= 1);
  CHECK(untagged >= 1);
  // One row per stage that changed the model; the saved model is the swapped one.
  const std::vector<Json> rows = records(run / "metrics.jsonl", "stage_report");
  REQUIRE(rows.size() == 2);
  CHECK(rows[0]["stage"] == "train");
  CHECK(rows[0]["weights"] == 16 * 12 + 12 + 12 * 3 + 3);
  CHECK(rows[1]["stage"] == "swap_and_tune");
  CHECK(rows[1]["weights"] == 16 * 6 + 6 + 6 * 3 + 3);
  CHECK(rows[1]["note"] == "swapped in a 6-unit MLP");
  CHECK(rows[1]["bytes_on_disk"].get<int64_t>() < rows[0]["bytes_on_disk"].get<int64_t>());
  CHECK(rows[1]["latency_b1_ms"].get<double>() > 0.0);
  CHECK(rows[1]["images_per_s"].get<double>() > 0.0);
  CHECK(std::filesystem::exists(run / "stages" / "1_swap_and_tune.safetensors"));
  const std::string md = test::read_text(run / "compression.md");
  CHECK_THAT(md, Contains("| 0 | train |"));
  CHECK_THAT(md, Contains("| 1 | swap_and_tune |"));
  CHECK_THAT(md, Contains("swapped in a 6-unit MLP"));
  // The evaluate stage shows the new model's accuracy (the measurement after the swap), not the
  // evaluation the train stage left.
  const std::string confusion = fmt::format("accuracy {:.2f}% (", 100.0 * rows[1]["accuracy"].get<double>());
  CHECK(rows[0]["accuracy"] != rows[1]["accuracy"]);
  CHECK_THAT(out.str().substr(out.str().rfind("true \\ predicted")), Contains(confusion));
  CHECK_THAT(test::read_text(run / "summary.json"), Contains("\"parameters\":123"));
}

TEST_CASE("a stage's fine-tuning stopped by a signal ends the run as interrupted, the stages after it not run",
          "[train][stages]") {
  register_test_stage();
  const config::Config cfg = config::Config::parse(R"(
name: stopped
threads: 1
data:
  dataset: synthetic
  batch_size: 16
  workers: 0
  synthetic: {size: 64, test_size: 32, channels: 1, height: 4, width: 4, classes: 3}
model: {preset: mlp, input_shape: [1, 4, 4], sizes: [16, 12, 3]}
train: {epochs: 1, optimizer: {type: sgd, lr: 0.1}}
stages: [train, interrupted_tune, evaluate, save]
)",
                                                   pipeline_schema(), "stopped.yaml");
  test::TempDir dir;
  std::ostringstream out;
  const int code = run_on_reference(cfg, dir, out);
  clear_interrupt();
  INFO(out.str());
  CHECK(code == 130);
  CHECK_THAT(out.str(), Contains("interrupted in the interrupted_tune stage at step 1"));
  const Json summary = Json::parse(test::read_text(dir.path() / "stopped" / "summary.json"));
  CHECK(summary["status"] == "interrupted");
  CHECK_FALSE(std::filesystem::exists(dir.path() / "stopped" / "model.safetensors"));  // (save did not run)
}

TEST_CASE("the stage table's ratios are against its first row", "[train][stages]") {
  StageRow a{"train", 0.9, 1000, 1000, 4000, 2.0, 100.0, 256, ""};
  StageRow b{"quantize", 0.895, 1000, 990, 1000, 1.0, 300.0, 256, "int8"};
  const std::string md = stage_table_markdown({a, b});
  CHECK_THAT(md, Contains("| 1 | quantize | 89.50% (-0.50) | 1000 | 990 | 1000 | 4.00x | 1.000 ms | 2.00x | 300 (batch "
                          "256) | 3.00x | int8 |"));
}

TEST_CASE("report: keys are checked", "[train][stages]") {
  CHECK_THROWS_WITH(parse_report_config(YAML::Load("{stages: true, latency: 3}"), "r.yaml"), Contains("latency"));
  const ReportConfig c = parse_report_config(YAML::Load("{stages: true, throughput_batch: 64}"), "r.yaml");
  CHECK(c.stages);
  CHECK(c.throughput_batch == 64);
  CHECK(c.latency_iters == 50);
}

}  // namespace
}  // namespace ingot::train
