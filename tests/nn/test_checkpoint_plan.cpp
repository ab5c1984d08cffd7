// Checkpoint plans: a model's units (nested Sequentials unrolled), the measured costs (and that
// measuring leaves the model and the random streams as they were), the balanced partition against
// every partition tried by brute force, block plans, and a planned ResNet giving the plain run's
// gradients bit for bit while holding far less at its peak.
#include <catch2/catch.hpp>

#include <map>

#include "ingot/nn/checkpoint.h"
#include "ingot/nn/checkpoint_plan.h"
#include "ingot/nn/loss.h"
#include "ingot/nn/nn.h"
#include "ingot/nn/presets.h"
#include "ingot/ops/ops.h"
#include "ingot/runtime/device_memory.h"
#include "ingot/runtime/registry.h"
#include "test_support.h"

using namespace ingot;
using namespace ingot::nn;

namespace {

std::function<Tensor(int64_t)> images(const Shape& sample) {
  return [sample](int64_t batch) {
    Shape s{batch};
    for (int64_t d : sample) s.push_back(d);
    Generator gen(3);
    return uniform(s, 0.0, 1.0, DType::F32, &gen);
  };
}

/// Every way to cut n units into at most k segments (ends, the last = n).
void partitions(size_t n, size_t k, std::vector<size_t>& cur, std::vector<std::vector<size_t>>& out) {
  const size_t begin = cur.empty() ? 0 : cur.back();
  if (begin == n) {
    out.push_back(cur);
    return;
  }
  if (cur.size() == k) return;
  for (size_t e = begin + 1; e <= n; ++e) {
    cur.push_back(e);
    partitions(n, k, cur, out);
    cur.pop_back();
  }
}

struct Grads {
  std::map<std::string, std::vector<float>> g;
  std::vector<float> loss;
  bool operator==(const Grads&) const = default;
};

Grads step(Module& m, const StateDict& start, const Tensor& x, const Tensor& y) {
  m.load_state_dict(start);
  m.zero_grad();
  const Tensor loss = cross_entropy(m(x), y);
  loss.backward();
  Grads out{{}, loss.to_vector<float>()};
  for (const auto& [name, p] : m.named_parameters()) out.g[name] = p.grad().to_vector<float>();
  return out;
}

}  // namespace

TEST_CASE("checkpoint plan: a ResNet's units are its stem, each block and its head", "[nn][checkpoint]") {
  Generator gen(1);
  const auto net = make_resnet({20, 8, 1, 10}, &gen);
  const std::vector<Sequential::Unit> units = net->units();
  std::vector<std::string> names;
  for (const auto& u : units) names.push_back(u.name);
  REQUIRE(names.size() == 15);  // 3 stem layers, 9 blocks, 3 head layers
  CHECK(names[3] == "layer1.0");
  CHECK(names[11] == "layer3.2");
  int blocks = 0;
  for (const auto& u : units) blocks += u.module().is_block() ? 1 : 0;
  CHECK(blocks == 9);
  // a nested Sequential with a hook stays one unit
  (*net)[3]->register_forward_hook([](Module&, const Tensor&, const Tensor&) { return std::optional<Tensor>(); });
  CHECK(net->units().size() == 13);
}

TEST_CASE("checkpoint plan: measuring changes neither the model's buffers nor the random streams", "[nn][checkpoint]") {
  Generator init(2), dropout(7);
  auto net = std::make_shared<Sequential>();
  Conv2dOptions c;
  c.padding = {1, 1};
  net->push_back(std::make_shared<Conv2d>(1, 4, 3, c, &init));
  net->push_back(std::make_shared<BatchNorm2d>(4));
  net->push_back(std::make_shared<ReLU>());
  net->push_back(std::make_shared<Dropout>(0.5, &dropout));
  net->push_back(std::make_shared<Flatten>());
  net->push_back(std::make_shared<Linear>(4 * 6 * 6, 3, true, &init));
  StateDict before;
  for (const auto& [name, t] : net->state_dict()) before.emplace_back(name, t.detach().clone());
  const Generator::State rng = dropout.state(), default_rng = default_generator().state();
  const std::vector<UnitCost> costs = measure_units(*net, images({1, 6, 6}));
  REQUIRE(costs.size() == 6);
  for (size_t i = 0; i < before.size(); ++i) {
    INFO(before[i].first);
    CHECK(test::compare(net->state_dict()[i].second, before[i].second, 0.0, 0.0).empty());
  }
  CHECK(dropout.state() == rng);
  CHECK(default_generator().state() == default_rng);
  // per sample: the conv's output is 4 x 6 x 6 f32, kept at least once
  CHECK(costs[0].output == 4 * 6 * 6 * 4);
  CHECK(costs[0].kept >= costs[0].output);
  CHECK(costs.back().output == 3 * 4);
}

TEST_CASE("checkpoint plan: the balanced partition has the lowest estimated peak of any", "[nn][checkpoint]") {
  // unequal units, as a CNN's: large at full resolution, small later, one expensive in the middle
  const std::vector<UnitCost> costs{{900, 300}, {600, 300}, {300, 100}, {2000, 100}, {200, 50},
                                    {200, 50},  {150, 40},  {100, 20},  {40, 10}};
  for (int64_t k = 1; k <= 5; ++k) {
    INFO(k << " segments");
    const CheckpointPlan plan = balanced_plan(costs, k);
    CHECK(plan.ends.size() <= static_cast<size_t>(k));
    CHECK(plan.ends.back() == costs.size());
    CHECK(plan.peak == estimated_peak(costs, plan.ends));
    std::vector<std::vector<size_t>> all;
    std::vector<size_t> cur;
    partitions(costs.size(), static_cast<size_t>(k), cur, all);
    int64_t best = plan.plain;
    for (const auto& ends : all) best = std::min(best, estimated_peak(costs, ends));
    CHECK(plan.peak == best);
  }
  CHECK(balanced_plan(costs, 1).peak == balanced_plan(costs, 1).plain);
  CHECK(balanced_plan(costs, 4).peak < balanced_plan(costs, 1).plain * 3 / 5);
  // a fused run is never cut
  std::vector<UnitCost> fused = costs;
  fused[4].starts_run = false;
  for (int64_t k = 2; k <= 5; ++k)
    for (size_t e : balanced_plan(fused, k).ends) CHECK(e != 4);
}

TEST_CASE("checkpoint plan: blocks each get a segment, and a planned ResNet computes the plain gradients",
          "[nn][checkpoint]") {
  for (const auto& backends : test::backend_sets("checkpoint plans")) {
    const test::RestoreBackends restore;
    BackendRegistry::instance().restrict_to(backends);
    INFO("backends " << (backends.empty() ? "all" : backends.front()));
    Generator gen(4);
    const auto plain = make_resnet({8, 4, 1, 3}, &gen);
    gen.manual_seed(4);
    const auto planned = make_resnet({8, 4, 1, 3}, &gen);
    StateDict start;
    for (const auto& [name, t] : plain->state_dict()) start.emplace_back(name, t.detach().clone());
    const auto input = images({1, 12, 12});
    const Tensor x = input(6);
    const Tensor y = Tensor::from_vector(std::vector<int64_t>{0, 1, 2, 0, 1, 2}, {6});
    const Grads want = step(*plain, start, x, y);
    for (const CheckpointingOptions& o : {CheckpointingOptions{.blocks = true}, CheckpointingOptions{.segments = 3}}) {
      INFO((o.blocks ? "blocks" : "3 segments"));
      const CheckpointPlan plan = apply_checkpointing(*planned, o, input, "t.yaml:1");
      if (o.blocks) {
        // stem, three blocks, head: each block alone
        CHECK(plan.names == std::vector<std::string>{"conv1-relu", "layer1.0", "layer2.0", "layer3.0", "pool-fc"});
      }
      CHECK(step(*planned, start, x, y) == want);
    }
  }
}

TEST_CASE("checkpoint plan: the step's peak falls with the plan, near its estimate", "[nn][checkpoint]") {
  Generator gen(5);
  const auto net = make_resnet({20, 8, 1, 10}, &gen);
  const auto input = images({1, 16, 16});
  const Tensor x = input(32);
  std::vector<int64_t> labels(32);
  for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<int64_t>(i % 10);
  const Tensor y = Tensor::from_vector(labels, {32});
  const auto peak_of_step = [&] {
    net->zero_grad();
    reset_peak_memory_stats();
    const int64_t base = memory_stats().allocated;
    cross_entropy((*net)(x), y).backward();
    return memory_stats().peak_allocated - base;
  };
  (void)peak_of_step();  // one-time allocations (gradients) first
  const int64_t plain = peak_of_step();
  const CheckpointPlan plan = apply_checkpointing(*net, {.blocks = true}, input, "t.yaml:1");
  (void)peak_of_step();
  const int64_t planned = peak_of_step();
  INFO("plain " << plain << " planned " << planned << " estimate " << plan.peak * 32);
  CHECK(planned < plain * 6 / 10);
  CHECK(static_cast<double>(planned) < 1.5 * static_cast<double>(plan.peak * 32));
}
