// The weight packing pass alone: a frozen inference graph's matmul weights packed once into the
// backend's layout, and the replayed forward against the eager one.
#include <catch2/catch.hpp>

#include "cpu_isa.h"
#include "graph_steps.h"
#include "ingot/base/grad_mode.h"
#include "ingot/graph/capture.h"
#include "ingot/graph/executable.h"
#include "ingot/graph/prepack.h"

using namespace ingot;
using namespace ingot::graph;
using ingot::test::MlpStep;
using ingot::test::same_bits;

namespace {

/// Packs the MLP's eval forward (batch `n`); returns how many weights were packed after checking
/// two replays against eager bit for bit.
int check_mlp(int64_t n) {
  MlpStep m;
  m.model->eval();
  const NoGradGuard no_grad;
  const auto first = MlpStep::batch(n, 1);
  Captured c = capture([&] { return std::vector<Tensor>{(*m.model)(first.first)}; }, {first.first}, {});
  REQUIRE(c.graph);
  Graph g = std::move(*c.graph);
  const int packed = prepack_weights(g);
  int opaque_weights = 0;
  for (const Node& node : g.nodes)
    if (node.op == INGOT_OP_MATMUL && node.inputs[1].desc.layout == INGOT_LAYOUT_OPAQUE) ++opaque_weights;
  CHECK(opaque_weights == packed);
  Executable exec(std::move(g));
  for (uint64_t seed = 2; seed < 4; ++seed) {
    const auto b = MlpStep::batch(n, seed);
    CHECK(same_bits(exec.run({b.first}, {}).front(), (*m.model)(b.first)));
  }
  return packed;
}

}  // namespace

TEST_CASE("prepack: a frozen MLP forward's weights are packed once where the backend offers a layout, with eager's bits") {
  test::on_each_backend_set("weight packing", [](bool all_loaded) {
    // cpu_onednn packs every Linear where its brgemm kernels run them (AVX-512); gemm's plain
    // layouts (AVX2) and the reference backend's keep them strided
    const int want = all_loaded && test::effective_isa() >= test::CpuIsa::Avx512Core ? 3 : 0;
    CHECK(check_mlp(1) == want);
    CHECK(check_mlp(5) == want);
  });
}
