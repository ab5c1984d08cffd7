// The pooled-gradient pass alone: in the CNN step (conv, batch norm -> ReLU, 2x2 max pooling,
// twice) both relu gradients move before max pooling's gradient, onto the pooled tensors, and a
// replay still gives the eager step's bits; overlapping windows are left alone.
#include <catch2/catch.hpp>

#include "graph_steps.h"
#include "ingot/graph/executable.h"
#include "ingot/graph/fusion.h"
#include "ingot/graph/in_place.h"
#include "ingot/graph/passes.h"
#include "ingot/graph/pool_grad.h"
#include "ingot/graph/recompute.h"
#include "ingot/nn/activation.h"
#include "ingot/nn/conv2d.h"
#include "ingot/nn/flatten.h"
#include "ingot/nn/linear.h"
#include "ingot/nn/pooling.h"

using namespace ingot;
using namespace ingot::graph;
using ingot::test::CnnStep;
using ingot::test::same_bits;

namespace {

/// How many elements the relu gradients next to a max pooling gradient (reading its output, or
/// read by it) produce in all.
int64_t relu_grad_elements(const Graph& g) {
  int64_t n = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& node = g.nodes[i];
    if (node.op != INGOT_OP_RELU_BWD || node.reorder) continue;
    bool next_to_pool = false;
    for (const Node& other : g.nodes)
      if (other.op == INGOT_OP_MAX_POOL2D_BWD && !other.reorder &&
          (other.outputs[0].value == node.inputs[0].value || other.inputs[0].value == node.outputs[0].value))
        next_to_pool = true;
    if (!next_to_pool) continue;
    int64_t e = 1;
    for (int d = 0; d < node.outputs[0].desc.ndim; ++d) e *= node.outputs[0].desc.shape[d];
    n += e;
  }
  return n;
}

void check_cnn(bool recompute) {
  CnnStep eager, replayed;
  Graph g = test::capture_step(eager, replayed, 8);
  fuse_elementwise(g);
  const size_t nodes = g.nodes.size();
  const int64_t before = relu_grad_elements(g);
  CHECK(move_relu_grads_before_pools(g) == 2);
  CHECK(g.nodes.size() == nodes);
  CHECK(relu_grad_elements(g) * 4 == before);  // 2x2 windows: a quarter of the elements
  // the relu gradients now read the pooled gradients, and max pooling's gradient theirs
  for (size_t i = 0; i + 1 < g.nodes.size(); ++i)
    if (g.nodes[i].op == INGOT_OP_MAX_POOL2D_BWD) {
      REQUIRE(i > 0);
      CHECK(g.nodes[i - 1].op == INGOT_OP_RELU_BWD);
      CHECK(g.nodes[i].inputs[0].value == g.nodes[i - 1].outputs[0].value);
    }
  if (recompute) recompute_activations(g);
  share_in_place(g);
  plan_memory(g);
  Executable exec(std::move(g));
  test::compare_replays(exec, eager, replayed, 8, [](const Tensor& got, const Tensor& want) { CHECK(same_bits(got, want)); });
}

}  // namespace

TEST_CASE("pool grads: a CNN step's relu gradients move before max pooling's and keep eager's bits") {
  test::on_each_backend_set("the pooled-gradient pass", [](bool) { check_cnn(false); });
}

TEST_CASE("pool grads: with recomputed activations and outputs written in place the bits stay eager's") {
  test::on_each_backend_set("the pooled-gradient pass", [](bool) { check_cnn(true); });
}

TEST_CASE("pool grads: overlapping windows (kernel 3 and stride 2) are left alone") {
  Generator gen(3);
  nn::Conv2dOptions same;
  same.padding = {1, 1};
  Pool2dParams overlapping;
  overlapping.kernel = {3, 3};
  overlapping.stride = {2, 2};
  overlapping.padding = {1, 1};
  auto model = std::make_shared<nn::Sequential>(std::initializer_list<nn::ModulePtr>{
      std::make_shared<nn::Conv2d>(1, 4, 3, same, &gen), std::make_shared<nn::ReLU>(),
      std::make_shared<nn::MaxPool2d>(overlapping), std::make_shared<nn::Flatten>(),
      std::make_shared<nn::Linear>(4 * 4 * 4, 3, true, &gen)});
  model->train();
  const auto b = test::labelled_batch({4, 1, 8, 8}, 3, 1);
  Captured c = capture(
      [&] {
        const Tensor loss = nn::cross_entropy((*model)(b.first), b.second);
        loss.backward();
        return std::vector<Tensor>{loss};
      },
      {b.first, b.second}, model->parameters());
  REQUIRE(c.graph);
  Graph g = *c.graph;
  CHECK(move_relu_grads_before_pools(g) == 0);
}
