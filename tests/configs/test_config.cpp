// Config loading and backend selection: every bad config in tests/configs/bad ends in one clear
// message with file and line (and an exit code), good configs give typed values.
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "ingot/base/error.h"
#include "ingot/config/backend_select.h"
#include "ingot/config/config.h"
#include "ingot/runtime/registry.h"
#include "ingot/train/pipeline_schema.h"
#include "config_paths.h"
#include "test_support.h"

namespace {

using ingot::config::Config;

std::string bad(const std::string& name) { return ingot::test::config_test_dir() + "/bad/" + name; }

// The ConfigError message of parsing `text` or loading `path` ("" when it loads).
std::string parse_error(const std::string& text) {
  try {
    Config::parse(text, ingot::train::pipeline_schema(), "c.yaml");
  } catch (const ingot::ConfigError& e) {
    CHECK(e.exit_code() == ingot::ExitCode::Usage);
    return e.what();
  }
  return "";
}
std::string load_error(const std::string& path) {
  try {
    Config::load(path, ingot::train::pipeline_schema());
  } catch (const ingot::ConfigError& e) {
    CHECK(e.exit_code() == ingot::ExitCode::Usage);
    return e.what();
  }
  return "";
}

bool cuda_available() {
  for (const auto& b : ingot::BackendRegistry::instance().backends())
    if (b->device_kind() == ingot::DeviceKind::CUDA) return true;
  return false;
}

}  // namespace

TEST_CASE("unknown keys name the line and the closest valid key", "[config]") {
  CHECK(load_error(bad("unknown_key.yaml")) ==
        bad("unknown_key.yaml") + ":3: unknown key 'bakend' at top level; did you mean 'backend'?");
  CHECK(load_error(bad("nested_unknown_key.yaml")) ==
        bad("nested_unknown_key.yaml") + ":4: unknown key 'matmul_sise' in smoke; did you mean 'matmul_size'?");
  // Nothing close: list the valid keys instead of guessing.
  CHECK(parse_error("name: x\nzzzzzzzz: 1\n") ==
        "c.yaml:2: unknown key 'zzzzzzzz' at top level; valid keys: name, backend, seed, threads, smoke, data, model, train, report, parallel, logging, init_from, stages");
  CHECK(parse_error("name: x\nsmoke:\n  conv:\n    kernal: 3\n") ==
        "c.yaml:4: unknown key 'kernal' in smoke.conv; did you mean 'kernel'?");
}

TEST_CASE("wrong types and ranges name the key, the line and the value", "[config]") {
  CHECK(load_error(bad("wrong_type.yaml")) == bad("wrong_type.yaml") + ":3: 'seed' must be an integer, got 'abc'");
  CHECK(load_error(bad("out_of_range.yaml")) == bad("out_of_range.yaml") + ":3: 'threads' must be >= 1, got 0");
  CHECK(parse_error("name: x\nseed: 1.5\n") == "c.yaml:2: 'seed' must be an integer, got '1.5'");
  CHECK(parse_error("name: x\nsmoke: 3\n") == "c.yaml:2: 'smoke' must be a map, got '3'");
  CHECK(parse_error("name: x\nsmoke:\n  matmul_size: [1, 2]\n") == "c.yaml:3: 'smoke.matmul_size' must be an integer, got a list");
  CHECK(parse_error("name: x\nseed:\n") == "c.yaml:2: 'seed' must be an integer, got nothing");
  CHECK(parse_error("name: [a]\n") == "c.yaml:1: 'name' must be a string, got a list");
  // Every float key is finite, checked at load (.nan once slipped past `min: 0`, .inf past every range).
  CHECK(parse_error("name: x\ntrain:\n  clip_grad_norm: .inf\n") ==
        "c.yaml:3: 'train.clip_grad_norm' must be a finite number, got '.inf'");
  CHECK(parse_error("name: x\ntrain:\n  clip_grad_norm: .nan\n") ==
        "c.yaml:3: 'train.clip_grad_norm' must be a finite number, got '.nan'");
}

TEST_CASE("structural problems: syntax, missing key, duplicates, missing file", "[config]") {
  CHECK_THAT(load_error(bad("syntax_error.yaml")), Catch::StartsWith(bad("syntax_error.yaml") + ":") &&
                                                       Catch::Contains("YAML syntax error"));
  CHECK(load_error(bad("missing_name.yaml")) == bad("missing_name.yaml") + ":2: missing required key 'name' at top level");
  CHECK(load_error(bad("duplicate_key.yaml")) ==
        bad("duplicate_key.yaml") + ":4: duplicate key 'seed' at top level (first at line 3)");
  CHECK(load_error(bad("no_such_file.yaml")) == bad("no_such_file.yaml") + ": config file not found");
  CHECK(parse_error("") == "c.yaml: the config is empty");
  CHECK(parse_error("- a\n- b\n") == "c.yaml:1: expected a map of keys at top level, got a list");
}

TEST_CASE("every file in tests/configs/bad is rejected with one line naming it", "[config]") {
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(ingot::test::config_test_dir() + "/bad")) {
    const std::string path = entry.path().string();
    INFO(path);
    std::string message;
    try {
      const Config cfg = Config::load(path, ingot::train::pipeline_schema());
      ingot::config::select_backends(cfg.backend(), cfg.where("backend"));
    } catch (const ingot::Error& e) {
      message = e.what();
      CHECK(e.exit_code() != ingot::ExitCode::Ok);
    }
    if (path.ends_with("backend_cuda.yaml") && cuda_available()) continue;
    CHECK_THAT(message, Catch::StartsWith(path + ":"));
    CHECK(message.find('\n') == std::string::npos);
    ++n;
  }
  CHECK(n >= 8);
  ingot::config::select_backends("auto");
}

TEST_CASE("a valid config gives typed values and positions", "[config]") {
  const Config cfg = Config::parse("name: ok\nseed: 7\nthreads: 2\nsmoke:\n  matmul_size: 64\n  conv:\n    kernel: 5\n",
                                   ingot::train::pipeline_schema(), "ok.yaml");
  CHECK(cfg.name() == "ok");
  CHECK(cfg.backend() == "auto");
  CHECK(cfg.seed() == 7);
  CHECK(cfg.threads() == 2);
  CHECK(cfg.get_int("smoke.matmul_size", 512) == 64);
  CHECK(cfg.get_int("smoke.conv.kernel", 3) == 5);
  CHECK(cfg.get_int("smoke.conv.batch", 8) == 8);
  CHECK(cfg.get_int("smoke.repeats", 3) == 3);
  CHECK_FALSE(cfg.has("smoke.repeats"));
  CHECK(cfg.where("smoke.matmul_size") == "ok.yaml:5");
  CHECK(cfg.where("nothing.here") == "ok.yaml");
  CHECK_FALSE(cfg.root()["nothing"].IsDefined());  // lookups never insert keys
  const Config shipped =
      Config::load(ingot::test::source_dir() + "/configs/smoke.yaml", ingot::train::pipeline_schema());
  CHECK(shipped.name() == "smoke");
}

TEST_CASE("suggestions come from edit distance", "[config]") {
  using ingot::config::closest_match;
  CHECK(ingot::config::edit_distance("bakend", "backend") == 1);
  CHECK(ingot::config::edit_distance("", "abc") == 3);
  CHECK(ingot::config::edit_distance("trian", "train") == 1);  // two neighbours swapped: one edit
  CHECK(ingot::config::edit_distance("ab", "ba") == 1);
  CHECK(ingot::config::edit_distance("abc", "ca") == 3);
  CHECK(closest_match("bakend", {"name", "backend", "seed"}) == "backend");
  CHECK(closest_match("thread", {"name", "threads"}) == "threads");
  CHECK(closest_match("xyz", {"name", "backend"}).empty());
  CHECK(closest_match("trian", {"name", "data", "model", "train", "stages"}) == "train");
  CHECK(parse_error("name: x\ntrian:\n  epochs: 1\n") ==
        "c.yaml:2: unknown key 'trian' at top level; did you mean 'train'?");
}

TEST_CASE("backend: cuda is required and missing here -> exit code 3", "[config][backend]") {
  if (cuda_available()) {
    ingot::test::skip("a CUDA backend is available on this machine");
    return;
  }
  try {
    ingot::config::select_backends("cuda", "c.yaml:2");
    FAIL("backend: cuda should fail without a CUDA backend");
  } catch (const ingot::BackendMissingError& e) {
    CHECK(e.exit_code() == ingot::ExitCode::BackendMissing);
    CHECK_THAT(e.what(), Catch::StartsWith("c.yaml:2: backend cuda is required but not available: "));
    CHECK_THAT(e.what(), Catch::Contains("cuda"));
  }
}

TEST_CASE("unknown backend names -> exit code 3 with a hint", "[config][backend]") {
  try {
    ingot::config::select_backends("referense");
    FAIL("an unknown backend should fail");
  } catch (const ingot::BackendMissingError& e) {
    CHECK(e.exit_code() == ingot::ExitCode::BackendMissing);
    CHECK_THAT(e.what(), Catch::Contains("backend 'referense' is not available") && Catch::Contains("did you mean 'reference'?"));
  }
}

TEST_CASE("auto, cpu and a named backend set the registry", "[config][backend]") {
  auto& reg = ingot::BackendRegistry::instance();
  const auto automatic = ingot::config::select_backends("auto");
  CHECK(automatic.requested == "auto");
  if (!cuda_available()) {
    CHECK(automatic.device.kind == ingot::DeviceKind::CPU);
    CHECK_THAT(automatic.note, Catch::StartsWith("backend auto: no CUDA backend (") && Catch::EndsWith("running on the CPU"));
  }
  CHECK(automatic.enabled.back() == "reference");

  const auto cpu = ingot::config::select_backends("cpu");
  CHECK(cpu.device.kind == ingot::DeviceKind::CPU);
  CHECK(cpu.note.empty());
  CHECK(reg.candidates(ingot::DeviceKind::CUDA).empty());

  const auto ref = ingot::config::select_backends("reference");
  REQUIRE(ref.enabled == std::vector<std::string>{"reference"});
  REQUIRE(reg.candidates(ingot::DeviceKind::CPU).size() == 1);
  CHECK(reg.candidates(ingot::DeviceKind::CPU).front()->name() == "reference");

  ingot::config::select_backends("auto");  // leave every backend enabled for other tests
  CHECK(reg.candidates(ingot::DeviceKind::CPU).size() == automatic.enabled.size());
}
