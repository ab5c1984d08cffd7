// The prune keys: amounts as torch reads them, the errors a bad config gets (one line each), and
// the Zhu & Gupta schedule's values and update points.
#include <catch2/catch.hpp>

#include <string>

#include "ingot/base/error.h"
#include "ingot/nn/presets.h"
#include "masks.h"
#include "prune_config.h"
#include "prune_stage.h"
#include "pruner.h"

namespace ingot::prune {
namespace {

using Catch::Matchers::Contains;

PruneConfig parse(const std::string& yaml, bool stage = true) {
  const YAML::Node node = YAML::Load(yaml);
  (stage ? prune_stage_schema() : gradual_prune_schema()).validate(node, "prune.yaml", "prune");
  return parse_prune_config(node, "prune.yaml", "prune");
}

TEST_CASE("amount: an integer is a count, a number with a point a fraction (torch's rule)", "[prune][config]") {
  const PruneConfig count = parse("{method: l1_unstructured, amount: 7}");
  REQUIRE(count.amount.is_count);
  REQUIRE(count.amount.count == 7);
  const PruneConfig one = parse("{method: l1_unstructured, amount: 1.0}");
  REQUIRE_FALSE(one.amount.is_count);
  REQUIRE(one.amount.fraction == 1.0);
  const PruneConfig f = parse("{method: ln_structured, amount: 0.5, n: 2, layers: [0, layer1.0.conv1]}");
  REQUIRE(f.amount.fraction == 0.5);
  REQUIRE(f.n == 2);
  REQUIRE(f.layers == std::vector<std::string>{"0", "layer1.0.conv1"});
  REQUIRE(f.make_permanent);
}

TEST_CASE("prune_count rounds halves to even like Python's round and refuses a count above n", "[prune][config]") {
  REQUIRE(prune_count(Amount::of_fraction(0.5), 5, "x") == 2);  // round(2.5) = 2
  REQUIRE(prune_count(Amount::of_fraction(0.5), 7, "x") == 4);  // round(3.5) = 4
  REQUIRE(prune_count(Amount::of_fraction(0.3), 288, "x") == 86);
  REQUIRE(prune_count(Amount::of_count(3), 5, "x") == 3);
  REQUIRE_THROWS_AS(prune_count(Amount::of_count(6), 5, "layer '0'"), ConfigError);
  REQUIRE_THROWS_WITH(prune_count(Amount::of_count(6), 5, "layer '0'"), Contains("layer '0'"));
}

TEST_CASE("a bad config gets one clear error", "[prune][config]") {
  REQUIRE_THROWS_AS(parse("{method: l1_unstructured, amount: 1.5}"), ConfigError);
  REQUIRE_THROWS_WITH(parse("{method: l1_unstructured, amount: 1.5}"),
                      Contains("prune.yaml:1") && Contains("amount") && Contains("[0, 1]") && Contains("1.5"));
  REQUIRE_THROWS_WITH(parse("{method: l1_unstructured, amount: -2}"), Contains("non-negative integer"));
  REQUIRE_THROWS_WITH(parse("{method: l1_unstructured, amount: lots}"), Contains("amount"));
  REQUIRE_THROWS_WITH(parse("{method: l1_unstructured, amount: 0.5, n: 2}"), Contains("ln_structured only"));
  REQUIRE_THROWS_WITH(parse("{method: l2_unstructured, amount: 0.5}"), Contains("l1_unstructured"));
  REQUIRE_THROWS_WITH(parse("{method: l1_unstructured, amount: 5, schedule: {type: zhu_gupta, steps: 10}}"),
                      Contains("fraction"));
  REQUIRE_THROWS_WITH(parse("{method: l1_unstructured, amount: 0.5, schedule: {type: zhu_gupta, steps: 10, "
                            "initial: 0.7}}"),
                      Contains("initial"));
  REQUIRE_THROWS_WITH(PruneStage(parse("{method: l1_unstructured, amount: 0.5, schedule: {type: zhu_gupta, "
                                       "steps: 10}}")),
                      Contains("fine_tune"));
  REQUIRE_THROWS_WITH(parse("{method: l1_unstructured, amount: 0.5, seed: 3}"), Contains("seed"));
  REQUIRE_NOTHROW(parse("{method: random_unstructured, amount: 0.5, seed: 3}", false));
}

TEST_CASE("an unknown or unprunable layer name gets one clear error", "[prune][config]") {
  auto model = nn::make_mlp({{16, 8, 4}, "relu", 0.0});
  PruneConfig c = parse("{method: l1_unstructured, amount: 0.5, layers: [1, nope]}");
  REQUIRE_THROWS_AS(Pruner(*model, c, 0), ConfigError);
  REQUIRE_THROWS_WITH(Pruner(*model, c, 0), Contains("prune.yaml:1") && Contains("no layer 'nope'") &&
                                                 Contains("1, 3"));
  c.layers = {"2"};  // the ReLU
  REQUIRE_THROWS_WITH(Pruner(*model, c, 0), Contains("'2' is a ReLU, not a Conv2d or Linear"));
  c.layers = {"1", "1"};
  REQUIRE_THROWS_WITH(Pruner(*model, c, 0), Contains("twice"));
  PruneConfig s = parse("{method: ln_structured, amount: 0.5, layers: [3]}");  // the output layer
  REQUIRE_THROWS_WITH(Pruner(*model, s, 0), Contains("'3'") && Contains("output layer"));
  s.layers = {"1"};
  REQUIRE_NOTHROW(Pruner(*model, s, 0));
  s.layers.clear();
  s.amount = Amount::of_fraction(1.0);
  Pruner all(*model, s, 0);
  REQUIRE_THROWS_WITH(all.prune(s.amount), Contains("all 8 filters of '1'"));
}

TEST_CASE("zhu_gupta: s_t = s_f + (s_i - s_f)(1 - (t - t0)/n)^3, held after t0 + n", "[prune][schedule]") {
  ZhuGupta z{100, 10, 0.0, 0};
  REQUIRE(z.sparsity_at(0, 0.8) == 0.0);
  REQUIRE(z.sparsity_at(50, 0.8) == Approx(0.7).epsilon(1e-12));
  REQUIRE(z.sparsity_at(25, 0.8) == Approx(0.8 - 0.8 * 0.421875).epsilon(1e-12));
  REQUIRE(z.sparsity_at(100, 0.8) == 0.8);
  REQUIRE(z.sparsity_at(500, 0.8) == 0.8);
  const ZhuGupta late{40, 10, 0.2, 20};
  REQUIRE(late.sparsity_at(10, 0.6) == 0.0);  // before begin: not pruned yet
  REQUIRE(late.sparsity_at(20, 0.6) == Approx(0.2));
  REQUIRE(late.sparsity_at(40, 0.6) == Approx(0.6 - 0.4 * 0.125));
  REQUIRE(late.sparsity_at(60, 0.6) == Approx(0.6));
  // Updates at begin, every `frequency`, and at the end even off the grid.
  const ZhuGupta odd{25, 10, 0.0, 5};
  std::vector<int64_t> points;
  for (int64_t t = 0; t < 60; ++t)
    if (odd.is_update(t)) points.push_back(t);
  REQUIRE(points == std::vector<int64_t>{5, 15, 25, 30});
  REQUIRE(odd.last_update(12) == 5);
  REQUIRE(odd.last_update(27) == 25);
  REQUIRE(odd.last_update(99) == 30);
}

}  // namespace
}  // namespace ingot::prune
