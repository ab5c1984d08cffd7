// The recompute pass alone: which values are made again for the backward pass, that the arena
// shrinks, and that a replay still gives the eager step's bits.
#include <catch2/catch.hpp>

#include "graph_steps.h"
#include "ingot/graph/capture.h"
#include "ingot/graph/executable.h"
#include "ingot/graph/fusion.h"
#include "ingot/graph/passes.h"
#include "ingot/graph/recompute.h"

using namespace ingot;
using namespace ingot::graph;
using ingot::test::ResNetStep;
using ingot::test::same_bits;

namespace {

void check_resnet_recompute() {
  ResNetStep eager(16), replayed(16);
  Graph g = test::capture_step(eager, replayed, 8);
  fuse_elementwise(g);
  Graph held = g;
  const size_t before = g.nodes.size();
  // the stem's and each block's first batch norm -> relu: read by the next conv in forward and
  // by its weight gradient and relu_bwd in backward
  CHECK(recompute_activations(g) == 4);
  CHECK(g.nodes.size() == before + 4);
  const MemoryPlan with = plan_memory(g), without = plan_memory(held);
  CHECK(with.peak_live_bytes < without.peak_live_bytes);
  CHECK(with.arena_bytes < without.arena_bytes);
  Executable exec(std::move(g));
  // the running statistics among the buffers: updated once per step, not twice
  test::compare_replays(exec, eager, replayed, 8, [](const Tensor& got, const Tensor& want) { CHECK(same_bits(got, want)); });
}

}  // namespace

TEST_CASE("recompute: a ResNet step's batch norm -> relu outputs are made again for backward, in less memory, with eager's bits") {
  test::on_each_backend_set("recomputation", [](bool) { check_resnet_recompute(); });
}

TEST_CASE("recompute: a forward-only graph (evaluation) has nothing to recompute") {
  ResNetStep m(4);
  m.model->eval();
  const auto b = ResNetStep::batch(4, 1);
  Captured c = capture([&] { return std::vector<Tensor>{(*m.model)(b.first)}; }, {b.first}, {});
  REQUIRE(c.graph);
  Graph g = *c.graph;
  fuse_elementwise(g);
  CHECK(recompute_activations(g) == 0);
}
