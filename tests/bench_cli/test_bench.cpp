// `ingot bench` as a library: the JSON schema bench/compare reads, --set overrides (and their
// errors), --save-init weights under torch's names, and the profile of the timed steps.
#include <catch2/catch.hpp>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ingot/base/error.h"
#include "ingot/config/overrides.h"
#include "ingot/io/safetensors.h"
#include "ingot/runtime/profiler.h"
#include "ingot/train/bench.h"
#include "ingot/train/pipeline_schema.h"

using namespace ingot;

namespace {

constexpr const char* kConfig = "tests/bench_cli/tiny_mlp.yaml";

train::BenchOptions tiny_options() {
  train::BenchOptions o;
  o.config = kConfig;
  o.warmup = 1;
  o.steps = 3;
  o.repeat = 2;
  o.infer_batch = 8;
  o.latency_iters = 5;
  return o;
}

void require_spread(const nlohmann::json& s) {
  REQUIRE(s.at("min").get<double>() > 0.0);
  REQUIRE(s.at("min").get<double>() <= s.at("median").get<double>());
  REQUIRE(s.at("median").get<double>() <= s.at("max").get<double>());
}

}  // namespace

TEST_CASE("bench: one run gives the JSON schema of bench/compare") {
  std::ostringstream log;
  train::BenchOptions o = tiny_options();
  o.overrides = {"model.sizes=[64, 16, 4]"};
  const train::BenchResult r = train::run_bench(o, log);
  const nlohmann::json j = nlohmann::json::parse(r.to_json());
  INFO(r.to_json());
  REQUIRE(j.at("framework") == "ingot");
  REQUIRE(j.at("config") == kConfig);
  REQUIRE(j.at("model") == "mlp");
  REQUIRE(j.at("params") == 64 * 16 + 16 + 16 * 4 + 4);  // the override took effect
  REQUIRE(j.at("dtype") == "f32");
  REQUIRE(j.at("threads") == 1);
  REQUIRE(j.at("batch_size") == 16);
  REQUIRE(j.at("infer_batch") == 8);
  REQUIRE(j.at("warmup") == 1);
  REQUIRE(j.at("steps") == 3);
  REQUIRE(j.at("repeat") == 2);
  for (const char* k : {"images_per_s", "ms_per_step"}) require_spread(j.at("train").at(k));
  for (const char* k : {"images_per_s", "ms_per_batch"}) require_spread(j.at("inference").at(k));
  REQUIRE(j.at("latency_b1_ms").at("median").get<double>() > 0.0);
  REQUIRE(j.at("latency_b1_ms").at("p90").get<double>() >= j.at("latency_b1_ms").at("median").get<double>());
  REQUIRE(j.at("memory").at("peak_allocated_bytes").get<int64_t>() > 0);
  REQUIRE(j.at("memory").at("peak_rss_bytes").get<int64_t>() > 0);
  const double hits = j.at("memory").at("train_cache_hit_rate").get<double>();
  REQUIRE(hits >= 0.0);
  REQUIRE(hits <= 1.0);
  REQUIRE(r.table().find("train images/s") != std::string::npos);
}

TEST_CASE("bench: --save-init writes the initial weights, --profile the timed steps") {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "ingot_test_bench";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::ostringstream log;
  train::BenchOptions o = tiny_options();
  o.save_init = dir / "init.safetensors";
  o.profile_dir = dir / "profile";
  (void)train::run_bench(o, log);
  const io::SafetensorsFile f = io::load_safetensors(o.save_init);
  REQUIRE(f.tensors.count("1.weight") == 1);  // Flatten, Linear, ReLU, Linear
  REQUIRE(f.tensors.at("1.weight").shape() == Shape{32, 64});
  REQUIRE(f.tensors.count("3.bias") == 1);
  REQUIRE(std::filesystem::exists(dir / "profile" / "profile.txt"));
  REQUIRE(std::filesystem::exists(dir / "profile" / "trace.json"));
  REQUIRE_FALSE(Profiler::enabled());
  const ProfileReport report = Profiler::instance().report();
  int64_t forward_calls = 0;
  for (const ProfileRow& row : report.rows)
    if (row.name == "forward" && row.category == "step") forward_calls = row.calls;
  REQUIRE(forward_calls == o.steps * o.repeat);  // timed steps only, no warm-up
  std::filesystem::remove_all(dir);
}

TEST_CASE("bench: bad options and overrides are config errors") {
  std::ostringstream log;
  train::BenchOptions o = tiny_options();
  o.steps = 0;
  REQUIRE_THROWS_WITH(train::run_bench(o, log), Catch::Contains("--steps 0: must be at least 1"));
  o = tiny_options();
  o.overrides = {"model.widht=4"};
  REQUIRE_THROWS_AS(train::run_bench(o, log), ConfigError);
  o.config = "tests/bench_cli/missing.yaml";
  REQUIRE_THROWS_WITH(train::run_bench(o, log), Catch::Contains("config file not found"));
}

TEST_CASE("overrides: dotted keys with YAML values, checked against the schema") {
  YAML::Node root = YAML::Load("name: x\ndata: {batch_size: 8}\n");
  config::apply_overrides(root, {"data.batch_size=512", "train.optimizer.lr=0.5", "model.sizes=[4, 2]"},
                          train::pipeline_schema());
  REQUIRE(root["data"]["batch_size"].as<int>() == 512);
  REQUIRE(root["train"]["optimizer"]["lr"].as<double>() == 0.5);
  REQUIRE(root["model"]["sizes"].size() == 2);
  REQUIRE_THROWS_WITH(
      config::apply_overrides(root, {"data.bach_size=4"}, train::pipeline_schema()),
      Catch::Contains("--set data.bach_size=4: unknown key 'bach_size' in data; did you mean 'batch_size'?"));
  REQUIRE_THROWS_WITH(config::apply_overrides(root, {"data.batch_size"}, train::pipeline_schema()),
                      Catch::Contains("expected KEY=VALUE"));
  REQUIRE_THROWS_WITH(config::apply_overrides(root, {"seed.x=1"}, train::pipeline_schema()),
                      Catch::Contains("'seed' is an integer, not a section"));
  REQUIRE_THROWS_WITH(config::apply_overrides(root, {"data..x=1"}, train::pipeline_schema()),
                      Catch::Contains("empty key"));
}

TEST_CASE("overrides: list elements by index, replaced, appended or refused") {
  YAML::Node root = YAML::Load(
      "name: x\nmodel:\n  layers:\n    - {type: linear, in: 4, out: 8}\n    - {type: relu}\n  sizes: [4, 2]\n");
  config::apply_overrides(root, {"model.layers.0.out=64", "model.sizes.1=3", "model.sizes.2=5"},
                          train::pipeline_schema());
  CHECK(root["model"]["layers"][0]["out"].as<int>() == 64);
  CHECK(root["model"]["layers"][0]["in"].as<int>() == 4);
  CHECK(root["model"]["layers"].IsSequence());
  CHECK(root["model"]["sizes"].as<std::vector<int>>() == std::vector<int>{4, 3, 5});
  REQUIRE_THROWS_WITH(config::apply_overrides(root, {"model.layers.7.out=1"}, train::pipeline_schema()),
                      Catch::Contains("'model.layers' is a list of 2 element(s): '7' is not an index in it (0 .. 1)"));
  REQUIRE_THROWS_WITH(config::apply_overrides(root, {"model.layers.x.out=1"}, train::pipeline_schema()),
                      Catch::Contains("'x' is not an index"));
}
