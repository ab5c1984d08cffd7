// The convolution algorithm pass alone: which convolutions may take Winograd kernels, that the
// reference backend still gives eager's bits, and that cpu_onednn's kernels give eager's losses
// and gradients to f32 rounding.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "graph_steps.h"
#include "ingot/graph/capture.h"
#include "ingot/graph/conv_algorithm.h"
#include "ingot/graph/executable.h"
#include "ingot/runtime/registry.h"

using namespace ingot;
using namespace ingot::graph;
using ingot::test::ResNetStep;
using ingot::test::same_bits;

namespace {

/// max |a - b| / (max |b| + 1e-12)
double relative_difference(const Tensor& a, const Tensor& b) {
  const std::vector<float> x = a.strided().contiguous().to_vector<float>(), y = b.strided().contiguous().to_vector<float>();
  REQUIRE(x.size() == y.size());
  double diff = 0.0, scale = 1e-12;
  for (size_t i = 0; i < x.size(); ++i) {
    diff = std::max(diff, static_cast<double>(std::abs(x[i] - y[i])));
    scale = std::max(scale, static_cast<double>(std::abs(y[i])));
  }
  return diff / scale;
}

/// Captures a ResNet-8 step of `width`, lets the pass choose, and compares two replays with eager:
/// bit for bit when `exact`, else within `tolerance`. Returns the pass's count.
int check(int64_t width, ConvChoice choice, bool exact, double tolerance = 0.0) {
  ResNetStep eager(width), replayed(width);
  Graph g = test::capture_step(eager, replayed, 8);
  const int chosen = choose_conv_algorithms(g, choice);
  int marked = 0;
  for (const Node& n : g.nodes) marked += allows_winograd(n) ? 1 : 0;
  CHECK(marked == chosen);
  Executable exec(std::move(g));
  test::compare_replays(exec, eager, replayed, 8, [&](const Tensor& got, const Tensor& want) {
    if (exact)
      CHECK(same_bits(got, want));
    else
      CHECK(relative_difference(got, want) <= tolerance);
  });
  return chosen;
}

}  // namespace

TEST_CASE("conv algorithm: every 3x3 stride-1 convolution may take Winograd, and the reference backend still gives eager's bits") {
  const test::RestoreBackends restore;
  BackendRegistry::instance().restrict_to({"reference"});
  // stem, block 1's two convs, blocks 2 and 3's second conv: 5 forward, 5 weight gradients and 4
  // input gradients (the stem's input needs none); strided and 1x1 convs are not candidates
  CHECK(check(4, ConvChoice::Always, true) == 14);
}

TEST_CASE("conv algorithm: Winograd kernels where a backend has them give eager's losses and gradients to f32 rounding") {
  test::on_each_backend_set("Winograd convolutions", [](bool) {
    check(16, ConvChoice::Always, false, 1e-4);
    const int measured = check(16, ConvChoice::Measure, false, 1e-4);  // keeps only what was faster
    CHECK(measured >= 0);
    CHECK(measured <= 14);
  });
}
