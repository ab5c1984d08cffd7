// emit_yaml and shortest_number_text: yaml-cpp's 17-digit doubles come out in their shortest
// round-trip form; integers and numbers as a person wrote them stay as they are.
#include <catch2/catch.hpp>

#include <yaml-cpp/yaml.h>

#include <string>

#include "ingot/config/yaml_text.h"

using ingot::config::emit_yaml;
using ingot::config::shortest_number_text;

TEST_CASE("yaml text: 17-digit doubles are shortened, other text is not", "[config][yaml_text]") {
  CHECK(shortest_number_text(YAML::Node(0.1).Scalar()) == "0.1");  // yaml-cpp: 0.10000000000000001
  CHECK(shortest_number_text(YAML::Node(0.9).Scalar()) == "0.9");
  CHECK(shortest_number_text(YAML::Node(1.0 / 3.0).Scalar()) == "0.3333333333333333");
  CHECK(shortest_number_text(YAML::Node(1e-8).Scalar()) == "1e-08");
  CHECK(shortest_number_text("0.30000000000000004") == "0.30000000000000004");  // already the shortest
  for (const char* kept : {"1e-3", "0.50", "10000000000000000", "64", "-3", "adamw", "", ".inf", "nan", "1.5x"})
    CHECK(shortest_number_text(kept) == kept);
  CHECK(YAML::Load(shortest_number_text(YAML::Node(0.1).Scalar())).as<double>() == 0.1);
}

TEST_CASE("yaml text: emit_yaml shortens every number of a tree and leaves the tree alone", "[config][yaml_text]") {
  YAML::Node n;
  n["lr"] = 0.1;
  n["betas"].push_back(0.9);
  n["betas"].push_back(0.999);
  n["betas"].SetStyle(YAML::EmitterStyle::Flow);
  n["nested"]["factor"] = 1.0 / 3.0;
  n["steps"] = static_cast<int64_t>(10000000000000000);
  n["name"] = "run";
  CHECK(emit_yaml(n) ==
        "lr: 0.1\nbetas: [0.9, 0.999]\nnested:\n  factor: 0.3333333333333333\nsteps: 10000000000000000\nname: run");
  CHECK(n["lr"].Scalar() == "0.10000000000000001");  // the caller's tree is not changed
}
