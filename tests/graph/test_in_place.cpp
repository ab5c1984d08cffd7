// The in-place pass alone: which outputs go over the inputs they replace, that the plan gives a
// shared pair one block and keeps every other live pair apart, that the arena shrinks where the
// peak held such a pair, and that a replay still gives the eager step's bits.
#include <catch2/catch.hpp>

#include "graph_steps.h"
#include "ingot/graph/executable.h"
#include "ingot/graph/fusion.h"
#include "ingot/graph/in_place.h"
#include "ingot/graph/passes.h"
#include "ingot/graph/recompute.h"

using namespace ingot;
using namespace ingot::graph;
using ingot::test::CnnStep;
using ingot::test::ResNetStep;
using ingot::test::same_bits;

namespace {

/// Whether `a` is `b`, or made over it (directly or through a chain of shares).
bool same_block(const Graph& g, int a, int b) {
  const auto root = [&](int v) {
    while (g.values[v].shares >= 0) v = g.values[v].shares;
    return v;
  };
  return root(a) == root(b);
}

/// Every planned pair whose lives overlap has separate bytes unless it is one block; each shared
/// input is read last by the node that makes the value over it.
void check_plan(const Graph& g) {
  const auto [first, last] = test::value_lives(g);
  int overlaps = 0;
  for (size_t a = 0; a < g.values.size(); ++a) {
    const Value& va = g.values[a];
    if (va.shares >= 0) {
      CHECK(va.arena_offset == g.values[va.shares].arena_offset);
      CHECK(last[va.shares] == first[a]);  // the input dies where the value over it is made
      CHECK(va.nbytes == g.values[va.shares].nbytes);
    }
    if (va.arena_offset < 0) continue;
    for (size_t b = a + 1; b < g.values.size(); ++b) {
      const Value& vb = g.values[b];
      if (vb.arena_offset < 0 || same_block(g, static_cast<int>(a), static_cast<int>(b))) continue;
      const bool lives = first[a] <= last[b] && first[b] <= last[a];
      const auto a0 = static_cast<size_t>(va.arena_offset), b0 = static_cast<size_t>(vb.arena_offset);
      overlaps += lives && a0 < b0 + vb.nbytes && b0 < a0 + va.nbytes ? 1 : 0;
    }
  }
  CHECK(overlaps == 0);
}

template <class Step>
void check_step(bool all_loaded, bool recompute) {
  Step eager, replayed;
  Graph g = test::capture_step(eager, replayed, 8);
  fuse_elementwise(g);
  if (recompute) recompute_activations(g);
  Graph separate = g;
  const int shared = share_in_place(g);
  // only cpu_onednn answers runs_in_place; the reference backend keeps every output apart
  if (!all_loaded) {
    CHECK(shared == 0);
    return;
  }
  CHECK(shared > 0);
  const MemoryPlan with = plan_memory(g), without = plan_memory(separate);
  CHECK(with.peak_live_bytes <= without.peak_live_bytes);
  CHECK(with.arena_bytes <= without.arena_bytes);
  if (recompute) CHECK(with.peak_live_bytes < without.peak_live_bytes);
  check_plan(g);
  Executable exec(std::move(g));
  test::compare_replays(exec, eager, replayed, 8, [](const Tensor& got, const Tensor& want) { CHECK(same_bits(got, want)); });
}

}  // namespace

TEST_CASE("in place: a ResNet step's gradients go over the ones they replace and keep eager's bits") {
  test::on_each_backend_set("in-place outputs", [](bool all_loaded) { check_step<ResNetStep>(all_loaded, false); });
}

TEST_CASE("in place: a CNN step with recomputed activations needs fewer bytes at its peak and keeps eager's bits") {
  test::on_each_backend_set("in-place outputs", [](bool all_loaded) { check_step<CnnStep>(all_loaded, true); });
}

TEST_CASE("in place: a value read again later or seen outside the step is never written over") {
  test::on_each_backend_set("in-place outputs", [](bool) {
    ResNetStep eager, replayed;
    Graph g = test::capture_step(eager, replayed, 8);
    fuse_elementwise(g);
    share_in_place(g);
    std::vector<int> last_read(g.values.size(), -1), made(g.values.size(), -1);
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      for (const TensorRef& r : g.nodes[i].inputs)
        if (r.defined()) last_read[r.value] = static_cast<int>(i);
      for (const TensorRef& r : g.nodes[i].outputs)
        if (made[r.value] < 0) made[r.value] = static_cast<int>(i);
    }
    for (size_t v = 0; v < g.values.size(); ++v) {
      const int s = g.values[v].shares;
      if (s < 0) continue;
      CHECK(last_read[s] == made[v]);  // no node after the one writing over it reads it
      CHECK(g.values[s].kind == ValueKind::Internal);
      CHECK_FALSE(g.values[s].escapes);
      CHECK_FALSE(g.values[v].escapes);
      for (const auto& [k, r] : g.grads) CHECK(r.value != s);
      for (const TensorRef& r : g.results) CHECK(r.value != s);
    }
  });
}
