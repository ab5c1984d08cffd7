// CompiledStep: warm-up, two agreeing captures, then replays that equal the eager steps bit for
// bit; a guard that changes compiles another graph; past the graph limit, or for a step whose host
// values change, the step runs eager (same results) and says why.
#include <catch2/catch.hpp>

#include "graph_steps.h"
#include "ingot/autograd/hooks.h"
#include "ingot/graph/compiled_step.h"
#include "ingot/ops/elementwise.h"
#include "ingot/ops/reduce.h"
#include "ingot/optim/sgd.h"

using namespace ingot;
using namespace ingot::graph;
using ingot::test::MlpStep;
using ingot::test::same_bits;

namespace {

/// Trains an eager and a compiled MLP side by side on batches of `sizes` (cycled) for `steps`
/// SGD steps; checks every loss and the final weights bit for bit; returns the compiled stats.
CompileStats train_side_by_side(int steps, std::vector<int64_t> sizes, CompileOptions options = {}) {
  MlpStep eager(0.25), compiled(0.25);
  optim::SgdOptions so;
  so.lr = 0.1;
  so.momentum = 0.9;
  optim::SGD opt_e(eager.params(), so), opt_c(compiled.params(), so);
  CompiledStep cs(options, compiled.params());
  for (int i = 0; i < steps; ++i) {
    const auto b = MlpStep::batch(sizes[static_cast<size_t>(i) % sizes.size()], static_cast<uint64_t>(100 + i));
    const Tensor le = eager.step(b).front();
    const Tensor lc = cs.run({b.first, b.second}, {}, [&] { return compiled.step(b); }).front();
    CHECK(same_bits(lc, le));
    opt_e.step();
    opt_c.step();
    eager.zero_grad();
    compiled.zero_grad();
  }
  for (size_t k = 0; k < eager.params().size(); ++k) CHECK(same_bits(compiled.params()[k], eager.params()[k]));
  return cs.stats();
}

}  // namespace

TEST_CASE("compiled step: one eager warm-up, two captures, then replays equal to eager over 12 steps") {
  const CompileStats s = train_side_by_side(12, {8});
  CHECK(s.eager == 1);
  CHECK(s.captured == 2);
  CHECK(s.replayed == 9);
  CHECK(s.graphs == 1);
  CHECK(s.fallback.empty());
  CHECK(s.planned_bytes > 0);
}

TEST_CASE("compiled step: a new batch size fails the guard and compiles a second graph") {
  // 8, 8, 8, 8, 5, 5, 5, 5, then 8 and 5 alternately: both keys replay.
  const CompileStats s = train_side_by_side(16, {8, 8, 8, 8, 5, 5, 5, 5, 8, 5, 8, 5, 8, 5, 8, 5});
  CHECK(s.graphs == 2);
  CHECK(s.replayed == 16 - 6);
}

TEST_CASE("compiled step: past max_graphs the other shapes run eager, with the same losses") {
  CompileOptions o;
  o.max_graphs = 1;
  const CompileStats s = train_side_by_side(12, {8, 8, 8, 8, 5, 5, 8, 5, 8, 5, 8, 5}, o);
  CHECK(s.graphs == 1);
  CHECK(s.fallback == "graph limit reached");
  CHECK(s.eager >= 5);
}

TEST_CASE("compiled step: each pass switched off still gives eager's bits") {
  for (int off = 0; off < 7; ++off) {
    CompileOptions o;
    o.dead_code = off != 0;
    o.fold = off != 1;
    o.plan_memory = off != 2;
    o.fuse = off != 3;
    o.recompute = off != 4;
    o.pool_grads = off != 5;
    o.in_place = off != 6;
    const CompileStats s = train_side_by_side(6, {8}, o);
    CHECK(s.replayed == 3);
  }
}

TEST_CASE("compiled step: a step fed a host value that changes runs eager and says why") {
  const Tensor x = Tensor::from_vector<float>({1, 2, 3}, {3});
  CompiledStep cs({}, {});
  for (int i = 1; i <= 6; ++i) {
    const double factor = i;
    const Tensor y = cs.run({x}, {}, [&] { return std::vector<Tensor>{sum(mul(x, factor))}; }).front();
    CHECK(y.item() == 6.0 * i);
  }
  CHECK(cs.stats().graphs == 0);
  CHECK(cs.stats().replayed == 0);
  CHECK_THAT(cs.stats().fallback, Catch::Contains("differs from one step to the next"));
}

TEST_CASE("compiled step: a replay calls each parameter's gradient hooks after the graph, as backward does") {
  MlpStep eager(0.25), compiled(0.25);
  std::vector<int> calls(compiled.params().size(), 0);
  std::vector<int> order;
  for (size_t k = 0; k < compiled.params().size(); ++k)
    autograd::register_post_accumulate_grad_hook(compiled.params()[k], [&calls, &order, k](const Tensor& leaf) {
      ++calls[k];
      order.push_back(static_cast<int>(k));
      CHECK(leaf.grad().defined());  // the step's gradient is there when the hook runs
    });
  CompiledStep cs(CompileOptions{}, compiled.params());
  for (int i = 0; i < 8; ++i) {
    const auto b = MlpStep::batch(8, static_cast<uint64_t>(200 + i));
    const Tensor le = eager.step(b).front();
    order.clear();
    const Tensor lc = cs.run({b.first, b.second}, {}, [&] { return compiled.step(b); }).front();
    CHECK(same_bits(lc, le));
    if (i == 7) {  // a replay: the last layer's parameters first, as backward produces them
      REQUIRE(order.size() == compiled.params().size());
      CHECK(order.front() == static_cast<int>(compiled.params().size()) - 1);
      CHECK(order.back() == 0);
    }
    eager.zero_grad();
    compiled.zero_grad();
  }
  CHECK(cs.stats().replayed == 5);
  for (int c : calls) CHECK(c == 8);  // eager, captured and replayed steps alike
}
