// Random tensors: the generator's (seed, offset) stream, reproducibility, ranges and moments.
#include <catch2/catch.hpp>

#include <cmath>

#include "ingot/ops/random.h"
#include "ingot/ops/reduce.h"
#include "test_support.h"

namespace ingot {
namespace {

TEST_CASE("each draw advances the offset by ceil(n / 4)", "[ops][random]") {
  Generator g(42);
  CHECK(g.offset() == 0);
  (void)rand({5}, DType::F32, &g);
  CHECK(g.offset() == 2);
  (void)randn({2, 4}, DType::F32, &g);
  CHECK(g.offset() == 4);
  (void)bernoulli({1}, 0.5, DType::Bool, &g);
  CHECK(g.offset() == 5);
  g.manual_seed(7);
  CHECK(g.state() == Generator::State{7, 0});
}

TEST_CASE("the same state gives the same values, a new offset gives new ones", "[ops][random]") {
  Generator g(3);
  const Generator::State start = g.state();
  const auto a = rand({16}, DType::F32, &g).to_vector<float>();
  const auto b = rand({16}, DType::F32, &g).to_vector<float>();
  g.set_state(start);
  const auto c = rand({16}, DType::F32, &g).to_vector<float>();
  CHECK(a == c);
  CHECK(a != b);
  Generator h(4);
  CHECK(rand({16}, DType::F32, &h).to_vector<float>() != a);
}

TEST_CASE("uniform, bernoulli and normal have the right range and moments", "[ops][random]") {
  Generator g(11);
  const Tensor u = uniform({4000}, -2.0, 3.0, DType::F64, &g);
  CHECK(min(u).item() >= -2.0);
  CHECK(max(u).item() < 3.0);
  CHECK(mean(u).item() == Approx(0.5).margin(0.1));
  const Tensor b = bernoulli({4000}, 0.25, DType::F32, &g);
  CHECK(mean(b).item() == Approx(0.25).margin(0.03));
  const Tensor n = normal({4000}, 1.0, 2.0, DType::F64, &g);
  const double m = mean(n).item();
  CHECK(m == Approx(1.0).margin(0.15));
  const auto v = n.to_vector<double>();
  double var = 0;
  for (double x : v) var += (x - m) * (x - m);
  CHECK(std::sqrt(var / static_cast<double>(v.size())) == Approx(2.0).margin(0.15));
  CHECK_THROWS_AS(uniform({2}, 0, 1, DType::I32, &g), DTypeError);
  CHECK_THROWS(bernoulli({2}, 1.5));
}

TEST_CASE("the default generator is used without one", "[ops][random]") {
  default_generator().manual_seed(5);
  const auto a = rand({4}).to_vector<float>();
  CHECK(default_generator().offset() == 1);
  default_generator().manual_seed(5);
  CHECK(rand({4}).to_vector<float>() == a);
}

}  // namespace
}  // namespace ingot
