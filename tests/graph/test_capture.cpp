// Graph capture and replay: a captured step replayed on new data gives the bits the eager step
// gives (loss, gradients, random draws, state updated in place); what a replay could not
// reproduce fails the capture or the comparison of two captures.
#include <catch2/catch.hpp>

#include "graph_steps.h"
#include "ingot/graph/capture.h"
#include "ingot/graph/executable.h"
#include "ingot/graph/passes.h"
#include "ingot/ops/creation.h"
#include "ingot/ops/elementwise.h"
#include "ingot/ops/reduce.h"

using namespace ingot;
using namespace ingot::graph;
using ingot::test::MlpStep;
using ingot::test::same_bits;

TEST_CASE("capture: a replay of an MLP step with dropout gives the eager step's loss, gradients and draws") {
  MlpStep eager(0.25), replayed(0.25);
  // The same start for both: the step that gets captured runs on both models.
  const auto batch0 = MlpStep::batch(8, 11);
  eager.step(batch0);
  Captured c = capture([&] { return replayed.step(batch0); }, {batch0.first, batch0.second}, replayed.params());
  REQUIRE(c.graph);
  REQUIRE(c.graph->nodes.size() > 10);
  REQUIRE(c.graph->rng.size() == 1);
  Executable exec(std::move(*c.graph));
  for (uint64_t seed : {12, 13, 14}) {
    const auto b = MlpStep::batch(8, seed);
    eager.zero_grad();
    replayed.zero_grad();
    const Tensor want = eager.step(b).front();
    const Tensor got = exec.run({b.first, b.second}, replayed.params()).front();
    CHECK(same_bits(got, want));
    for (size_t k = 0; k < eager.params().size(); ++k) CHECK(same_bits(replayed.params()[k].grad(), eager.params()[k].grad()));
    CHECK(replayed.dropout_gen.state() == eager.dropout_gen.state());
  }
}

TEST_CASE("capture: state written in place (batch norm's running statistics) is written by each replay") {
  ingot::test::CnnStep eager, replayed;
  const auto b0 = ingot::test::CnnStep::batch(4, 3);
  eager.step(b0);
  Captured c = capture([&] { return replayed.step(b0); }, {b0.first, b0.second}, replayed.params());
  REQUIRE(c.graph);
  Executable exec(std::move(*c.graph));
  for (uint64_t seed : {4, 5}) {
    const auto b = ingot::test::CnnStep::batch(4, seed);
    eager.zero_grad();
    replayed.zero_grad();
    const Tensor want = eager.step(b).front();
    const Tensor got = exec.run({b.first, b.second}, replayed.params()).front();
    CHECK(same_bits(got, want));
  }
  const auto eb = eager.model->buffers(), rb = replayed.model->buffers();
  REQUIRE(eb.size() == rb.size());
  for (size_t i = 0; i < eb.size(); ++i) CHECK(same_bits(rb[i], eb[i]));
}

TEST_CASE("capture: a host value that changes between steps makes two captures differ") {
  const Tensor x = Tensor::from_vector<float>({1, 2, 3, 4}, {4});
  double factor = 2.0;
  auto step = [&] { return std::vector<Tensor>{sum(mul(x, factor))}; };
  Captured a = capture(step, {x}, {});
  Captured b = capture(step, {x}, {});
  REQUIRE(a.graph);
  REQUIRE(b.graph);
  std::string why;
  CHECK(same_graph(*a.graph, *b.graph, &why));
  factor = 3.0;
  Captured c = capture(step, {x}, {});
  REQUIRE(c.graph);
  CHECK_FALSE(same_graph(*a.graph, *c.graph, &why));
  CHECK_THAT(why, Catch::Contains("constant the host code made changed"));
}

TEST_CASE("capture: a large tensor the host code makes inside the step fails the capture, naming its reader") {
  const Tensor x = ones({600, 600});
  auto step = [&] {
    const Tensor host = Tensor::from_vector<float>(std::vector<float>(600 * 600, 0.5f), {600, 600});
    return std::vector<Tensor>{sum(mul(x, host))};
  };
  Captured c = capture(step, {x}, {});
  CHECK_FALSE(c.graph);
  CHECK_THAT(c.failure, Catch::Contains("1440000-byte tensor") && Catch::Contains("mul"));
  REQUIRE(c.results.size() == 1);
  CHECK(c.results[0].item() == Approx(180000.0));
}

TEST_CASE("capture: a tensor made before the step and kept after it is state, read live by each replay") {
  Tensor w = Tensor::from_vector<float>({1, 1}, {2});
  const Tensor x = Tensor::from_vector<float>({3, 4}, {2});
  Captured c = capture([&] { return std::vector<Tensor>{sum(mul(x, w))}; }, {x}, {});
  REQUIRE(c.graph);
  Executable exec(std::move(*c.graph));
  w.fill_(2.0);
  CHECK(exec.run({x}, {}).front().item() == 14.0);
  const Tensor x2 = Tensor::from_vector<float>({1, 1}, {2});
  CHECK(exec.run({x2}, {}).front().item() == 4.0);
}
