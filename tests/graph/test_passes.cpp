// Each graph pass alone: what it removes, folds or places, and that the replay still gives the
// eager step's bits.
#include <catch2/catch.hpp>

#include "graph_steps.h"
#include "ingot/graph/capture.h"
#include "ingot/graph/executable.h"
#include "ingot/graph/graph_dump.h"
#include "ingot/graph/passes.h"
#include "ingot/ops/creation.h"
#include "ingot/ops/elementwise.h"
#include "ingot/ops/reduce.h"

using namespace ingot;
using namespace ingot::graph;
using ingot::test::MlpStep;
using ingot::test::same_bits;

namespace {

/// The MLP step, captured once (after a warm-up step on another model of the same seeds).
struct CapturedMlp {
  MlpStep eager{0.25}, replayed{0.25};
  Graph graph;
  CapturedMlp() {
    const auto b = MlpStep::batch(8, 1);
    eager.step(b);
    Captured c = capture([&] { return replayed.step(b); }, {b.first, b.second}, replayed.params());
    REQUIRE(c.graph);
    graph = std::move(*c.graph);
  }
  /// Replays `exec` and runs the eager step on one more batch: same loss and gradients.
  void check_replay(Executable& exec) {
    const auto b = MlpStep::batch(8, 2);
    eager.zero_grad();
    replayed.zero_grad();
    const Tensor want = eager.step(b).front();
    CHECK(same_bits(exec.run({b.first, b.second}, replayed.params()).front(), want));
    for (size_t k = 0; k < eager.params().size(); ++k)
      CHECK(same_bits(replayed.params()[k].grad(), eager.params()[k].grad()));
  }
};

}  // namespace

TEST_CASE("dead code: an op whose result nothing reads is removed, and only it") {
  const Tensor x = Tensor::from_vector<float>({1, 2, 3}, {3});
  Captured c = capture(
      [&] {
        const Tensor unused = exp(x);  // read by nothing
        (void)unused;
        return std::vector<Tensor>{sum(mul(x, x))};
      },
      {x}, {});
  REQUIRE(c.graph);
  Graph g = *c.graph;
  const size_t before = g.nodes.size();
  CHECK(eliminate_dead_code(g) == 1);
  CHECK(g.nodes.size() == before - 1);
  for (const Node& n : g.nodes) CHECK(n.name() != "exp");
  Executable exec(std::move(g));
  CHECK(exec.run({Tensor::from_vector<float>({2, 2, 2}, {3})}, {}).front().item() == 12.0);
}

TEST_CASE("dead code: nothing of a training step is dead, and the replay is unchanged") {
  CapturedMlp m;
  CHECK(eliminate_dead_code(m.graph) == 0);
  Executable exec(std::move(m.graph));
  m.check_replay(exec);
}

TEST_CASE("constant folding: ops on constants only run once, at compile time") {
  const Tensor x = Tensor::from_vector<float>({1, 2, 3}, {3});
  Captured c = capture(
      [&] {
        const Tensor k = mul(full({3}, 2.0), 3.0);  // a fill and a mul of constants
        return std::vector<Tensor>{sum(mul(x, k))};
      },
      {x}, {});
  REQUIRE(c.graph);
  Graph g = *c.graph;
  const size_t before = g.nodes.size();
  CHECK(fold_constants(g) == 2);
  CHECK(g.nodes.size() == before - 2);
  Executable exec(std::move(g));
  CHECK(exec.run({Tensor::from_vector<float>({1, 1, 1}, {3})}, {}).front().item() == 18.0);
  CHECK(exec.run({x}, {}).front().item() == 36.0);
}

TEST_CASE("constant folding: the backward pass's seed gradient folds, and the replay is unchanged") {
  CapturedMlp m;
  CHECK(fold_constants(m.graph) >= 1);
  Executable exec(std::move(m.graph));
  m.check_replay(exec);
}

TEST_CASE("memory plan: values whose lives overlap never share bytes, and reuse shrinks the arena") {
  CapturedMlp m;
  Graph no_reuse = m.graph;
  const MemoryPlan flat = plan_memory(no_reuse, false);
  const MemoryPlan plan = plan_memory(m.graph);
  CHECK(flat.arena_bytes == flat.unplanned_bytes);
  CHECK(plan.arena_bytes < flat.arena_bytes);
  CHECK(plan.arena_bytes >= plan.peak_live_bytes);
  CHECK(plan.escaping_bytes > 0);  // the loss and the gradients
  // Liveness from the nodes, then every pair of planned values with overlapping lives.
  const Graph& g = m.graph;
  const auto [first, last] = test::value_lives(g);
  int overlaps = 0, planned = 0;
  for (size_t a = 0; a < g.values.size(); ++a) {
    if (g.values[a].arena_offset < 0) continue;
    ++planned;
    CHECK(g.values[a].arena_offset % 64 == 0);
    for (size_t b = a + 1; b < g.values.size(); ++b) {
      if (g.values[b].arena_offset < 0) continue;
      const bool lives = first[a] <= last[b] && first[b] <= last[a];
      const auto a0 = static_cast<size_t>(g.values[a].arena_offset), b0 = static_cast<size_t>(g.values[b].arena_offset);
      const bool bytes = a0 < b0 + g.values[b].nbytes && b0 < a0 + g.values[a].nbytes;
      overlaps += lives && bytes ? 1 : 0;
    }
  }
  CHECK(planned > 5);
  CHECK(overlaps == 0);
  Executable exec(std::move(m.graph));
  m.check_replay(exec);
}

TEST_CASE("graph dump: text and dot name every node, its backend and, after a replay, its time") {
  CapturedMlp m;
  const std::string text = graph_text(m.graph, std::vector<double>(m.graph.nodes.size(), 1e-6));
  CHECK_THAT(text, Catch::Contains("matmul") && Catch::Contains("dropout") && Catch::Contains("rng+") &&
                       Catch::Contains("1.0 us") && Catch::Contains("# gradients: param 0 <- %"));
  const std::string dot = graph_dot(m.graph);
  CHECK_THAT(dot, Catch::StartsWith("digraph step {") && Catch::Contains("-> n"));
}
