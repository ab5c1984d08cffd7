// The recompute pass alone: which values are made again for the backward pass, that the arena
// shrinks, and that a replay still gives the eager step's bits.
#include <catch2/catch.hpp>

#include "graph_steps.h"
#include "ingot/graph/capture.h"
#include "ingot/graph/executable.h"
#include "ingot/graph/fusion.h"
#include "ingot/graph/passes.h"
#include "ingot/graph/recompute.h"
#include "ingot/runtime/registry.h"

using namespace ingot;
using namespace ingot::graph;
using ingot::test::ResNetStep;
using ingot::test::same_bits;

namespace {

void check_resnet_recompute() {
  ResNetStep eager(16), replayed(16);
  const auto first = ResNetStep::batch(8, 1);
  eager.step(first);
  Captured c = capture([&] { return replayed.step(first); }, {first.first, first.second}, replayed.params());
  REQUIRE(c.graph);
  Graph g = std::move(*c.graph);
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
  for (uint64_t seed = 2; seed < 4; ++seed) {
    const auto b = ResNetStep::batch(8, seed);
    eager.zero_grad();
    replayed.zero_grad();
    const Tensor want = eager.step(b).front();
    CHECK(same_bits(exec.run({b.first, b.second}, replayed.params()).front(), want));
    for (size_t k = 0; k < eager.params().size(); ++k)
      CHECK(same_bits(replayed.params()[k].grad(), eager.params()[k].grad()));
    const auto be = eager.model->buffers(), br = replayed.model->buffers();
    REQUIRE(be.size() == br.size());
    for (size_t k = 0; k < be.size(); ++k) CHECK(same_bits(br[k], be[k]));  // updated once per step
  }
}

}  // namespace

TEST_CASE("recompute: a ResNet step's batch norm -> relu outputs are made again for backward, in less memory, with eager's bits") {
  const test::RestoreBackends restore;
  for (const auto& backends : test::backend_sets("recomputation")) {
    BackendRegistry::instance().restrict_to(backends);
    INFO("backends: " << (backends.empty() ? "all loaded" : backends[0]));
    check_resnet_recompute();
  }
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
