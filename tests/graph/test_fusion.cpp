// The fusion pass alone: which pairs it fuses, which it leaves, and that a replay of the fused
// graph gives the eager step's bits.
#include <catch2/catch.hpp>

#include "graph_steps.h"
#include "ingot/graph/capture.h"
#include "ingot/graph/executable.h"
#include "ingot/graph/fusion.h"
#include "ingot/graph/passes.h"
#include "ingot/ops/elementwise.h"
#include "ingot/ops/linalg.h"
#include "ingot/ops/reduce.h"

using namespace ingot;
using namespace ingot::graph;
using ingot::test::ResNetStep;
using ingot::test::same_bits;

namespace {

int count(const Graph& g, OpKind op) {
  int n = 0;
  for (const Node& node : g.nodes) n += !node.reorder && node.op == op ? 1 : 0;
  return n;
}

/// Captures a ResNet-8 step, fuses it and checks the fused ops and two replays against eager.
void check_resnet_fusion() {
  ResNetStep eager, replayed;
  Graph g = test::capture_step(eager, replayed, 8);
  const size_t before = g.nodes.size();
  const int relus = count(g, INGOT_OP_RELU), relu_bwds = count(g, INGOT_OP_RELU_BWD);
  const int fused = fuse_elementwise(g);
  // ResNet-8: the stem's and each block's first batch norm feed a relu (4), each block's residual
  // add does (3), and the gradients of the stem's and two blocks' outputs meet in an add (3)
  CHECK(count(g, INGOT_OP_BATCH_NORM_RELU) == 4);
  CHECK(count(g, INGOT_OP_ADD_RELU) == 3);
  CHECK(count(g, INGOT_OP_ADD_RELU_BWD) == 3);
  CHECK(fused == 10);
  CHECK(g.nodes.size() == before - 10);
  CHECK(count(g, INGOT_OP_RELU) == relus - 7);
  CHECK(count(g, INGOT_OP_RELU_BWD) == relu_bwds - 3);
  plan_memory(g);
  Executable exec(std::move(g));
  test::compare_replays(exec, eager, replayed, 8, [](const Tensor& got, const Tensor& want) { CHECK(same_bits(got, want)); });
}

}  // namespace

TEST_CASE("fusion: a ResNet step's batch norm -> relu, add -> relu and add -> relu_bwd fuse, and replays give eager's bits") {
  test::on_each_backend_set("fusion", [](bool) { check_resnet_fusion(); });
}

TEST_CASE("fusion: add -> relu fuses and keeps relu's values, and an add something else reads too stays") {
  const Tensor a = Tensor::from_vector<float>({-2, -0.5, 0, 1, 3, -1}, {2, 3});
  const Tensor b = Tensor::from_vector<float>({1, 0.5, 0, -2, 1, 0.25}, {2, 3});
  SECTION("single use") {
    Captured c = capture([&] { return std::vector<Tensor>{relu(a + b)}; }, {a, b}, {});
    REQUIRE(c.graph);
    Graph g = *c.graph;
    CHECK(fuse_elementwise(g) == 1);
    REQUIRE(g.nodes.size() == 1);
    CHECK(g.nodes[0].op == INGOT_OP_ADD_RELU);
    Executable exec(std::move(g));
    const Tensor x = Tensor::from_vector<float>({5, -5, 1, -1, 0.5, -0.5}, {2, 3});
    CHECK(same_bits(exec.run({x, b}, {}).front(), relu(x + b)));
    CHECK(exec.run({x, b}, {}).front().to_vector<float>() == std::vector<float>{6, 0, 1, 0, 1.5, 0});
  }
  SECTION("the sum read twice") {
    Captured c = capture(
        [&] {
          const Tensor s = a + b;
          return std::vector<Tensor>{relu(s), sum(s)};
        },
        {a, b}, {});
    REQUIRE(c.graph);
    Graph g = *c.graph;
    CHECK(fuse_elementwise(g) == 0);
  }
  SECTION("the sum kept after the step") {
    Captured c = capture(
        [&] {
          const Tensor s = a + b;
          return std::vector<Tensor>{relu(s), s};
        },
        {a, b}, {});
    REQUIRE(c.graph);
    Graph g = *c.graph;
    CHECK(fuse_elementwise(g) == 0);
  }
}

TEST_CASE("fusion: a matmul's activation becomes its epilogue at inference and keeps the activation's bits") {
  test::on_each_backend_set("matmul epilogues", [](bool) {
    const Tensor x = test::random_tensor({6, 16}, DType::F32, 1);
    const Tensor w1 = test::random_tensor({32, 16}, DType::F32, 2), b1 = test::random_tensor({32}, DType::F32, 3);
    const Tensor w2 = test::random_tensor({8, 32}, DType::F32, 4), b2 = test::random_tensor({8}, DType::F32, 5);
    const Tensor w3 = test::random_tensor({4, 8}, DType::F32, 6);
    // a transformer MLP's shape: linear -> GELU (tanh form) -> linear -> ReLU -> matmul -> GELU (erf)
    const auto forward = [&](const Tensor& in) {
      return gelu(matmul(relu(linear(gelu_tanh(linear(in, w1, b1)), w2, b2)), w3.transpose(0, 1)));
    };
    Captured c = capture([&] { return std::vector<Tensor>{forward(x)}; }, {x}, {});
    REQUIRE(c.graph);
    Graph g = *c.graph;
    const size_t before = g.nodes.size();
    CHECK(fuse_elementwise(g) == 3);
    CHECK(g.nodes.size() == before - 3);
    for (const Node& n : g.nodes) CHECK((n.op == INGOT_OP_MATMUL || n.reorder));
    Executable exec(std::move(g));
    const Tensor x2 = test::random_tensor({6, 16}, DType::F32, 7);
    CHECK(same_bits(exec.run({x2}, {}).front(), forward(x2)));
  });
}

TEST_CASE("fusion: an activation whose input training keeps for its gradient stays apart from the matmul") {
  const Tensor x = test::random_tensor({6, 16}, DType::F32, 1);
  const Tensor w = test::random_tensor({8, 16}, DType::F32, 2);
  w.set_requires_grad();
  Captured c = capture(
      [&] {
        const Tensor loss = sum(gelu(linear(x, w)));
        loss.backward();
        return std::vector<Tensor>{loss};
      },
      {x}, {w});
  REQUIRE(c.graph);
  Graph g = *c.graph;
  CHECK(fuse_elementwise(g) == 0);  // gelu_bwd reads the matmul's output too
}
