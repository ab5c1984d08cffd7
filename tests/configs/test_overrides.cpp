// Command-line overrides (KEY=VALUE, --set): unknown keys get a suggestion at every level, and a
// bad value is blamed on the assignment that gave it, not on a line of the file.
#include <catch2/catch.hpp>

#include <string>

#include "ingot/base/error.h"
#include "ingot/config/overrides.h"
#include "ingot/config/value_origin.h"
#include "ingot/train/pipeline_schema.h"

namespace {

using ingot::config::Config;

const char* kFile = "name: t\nseed: 1\ntrain:\n  epochs: 2\n";

/// The ConfigError of applying `assignments` to kFile and validating the result ("" if none).
std::string override_error(const std::vector<std::string>& assignments) {
  YAML::Node root = YAML::Load(kFile);
  try {
    ingot::config::apply_overrides(root, assignments, ingot::train::pipeline_schema());
    Config::from_yaml(root, "t.yaml", ingot::train::pipeline_schema());
  } catch (const ingot::ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("overrides: a bad value names the assignment, not line 1 of the file", "[config][overrides]") {
  CHECK(override_error({"train.epochs=abc"}) ==
        "train.epochs=abc (command line): 'train.epochs' must be an integer, got 'abc'");
  CHECK(override_error({"seed=-x"}) == "seed=-x (command line): 'seed' must be an integer, got '-x'");
  // A section made by the assignment: its keys are checked and named the same way.
  CHECK(override_error({"smoke={matmul_size: big}"}) ==
        "smoke={matmul_size: big} (command line): 'smoke.matmul_size' must be an integer, got 'big'");
  // Values of the file keep their lines.
  CHECK(override_error({"seed=2", "train.epochs=zero"}) ==
        "train.epochs=zero (command line): 'train.epochs' must be an integer, got 'zero'");
  YAML::Node root = YAML::Load(kFile);
  ingot::config::apply_overrides(root, {"seed=2"}, ingot::train::pipeline_schema());
  const Config cfg = Config::from_yaml(root, "t.yaml", ingot::train::pipeline_schema());
  CHECK(cfg.where("seed") == "seed=2 (command line)");
  CHECK(cfg.where("train.epochs") == "t.yaml:4");
  CHECK(cfg.where("name") == "t.yaml:1");
}

TEST_CASE("overrides: an unknown key gets the closest one at the top level too", "[config][overrides]") {
  CHECK(override_error({"trian.epochs=3"}) == "--set trian.epochs=3: unknown key 'trian'; did you mean 'train'?");
  CHECK(override_error({"train.epcohs=3"}) ==
        "--set train.epcohs=3: unknown key 'epcohs' in train; did you mean 'epochs'?");
}

TEST_CASE("value origin: the nodes inside an assigned value, and only those, have it", "[config][overrides]") {
  const YAML::Node value = YAML::Load("{a: [1, 2], b: x}");
  ingot::config::mark_command_line(value, "k={a: [1, 2], b: x}");
  YAML::Node tree = YAML::Load("k: 0\nother: 1\n");
  tree["k"] = value;  // the tree shares the value's nodes
  CHECK(ingot::config::command_line_origin(tree["k"]["a"][1]) == "k={a: [1, 2], b: x}");
  CHECK(ingot::config::command_line_origin(tree["k"]["b"]) == "k={a: [1, 2], b: x}");
  CHECK_FALSE(ingot::config::command_line_origin(tree["other"]).has_value());
  CHECK_FALSE(ingot::config::command_line_origin(YAML::Clone(value)).has_value());  // a copy is not the value
}
