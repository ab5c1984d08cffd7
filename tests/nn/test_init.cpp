// Default initialisation: PyTorch's distributions (bounds, mean, variance checked statistically,
// about 5 standard errors wide so a correct draw fails with negligible probability), and
// reproducibility from a seed.
#include <catch2/catch.hpp>

#include <cmath>

#include "ingot/nn/nn.h"
#include "ingot/ops/ops.h"
#include "test_support.h"

using namespace ingot;
using namespace ingot::nn;

namespace {

struct Stats {
  double min, max, mean, var;
  int64_t n;
};

Stats stats(const Tensor& t) {
  const auto v = t.to_vector<double>();
  Stats s{v[0], v[0], 0.0, 0.0, static_cast<int64_t>(v.size())};
  for (double x : v) {
    s.min = std::min(s.min, x);
    s.max = std::max(s.max, x);
    s.mean += x;
  }
  s.mean /= static_cast<double>(v.size());
  for (double x : v) s.var += (x - s.mean) * (x - s.mean);
  s.var /= static_cast<double>(v.size() - 1);
  return s;
}

// U(-b, b): inside the bounds, reaching near them, mean 0 and variance b^2 / 3.
void check_uniform(const Tensor& t, double b) {
  const Stats s = stats(t);
  const double n = static_cast<double>(s.n);
  INFO("bound " << b << " min " << s.min << " max " << s.max << " mean " << s.mean << " var " << s.var);
  CHECK(s.min >= -b);
  CHECK(s.max < b);
  CHECK(s.min < -b * (1 - 20.0 / n));
  CHECK(s.max > b * (1 - 20.0 / n));
  CHECK(std::abs(s.mean) < 5.0 * b / std::sqrt(3.0 * n));
  // Var of the sample variance of U(-b, b): (b^4 / 5 - b^4 / 9) / n = 4 b^4 / (45 n)
  CHECK(std::abs(s.var - b * b / 3.0) < 5.0 * std::sqrt(4.0 / 45.0 / n) * b * b);
}

}  // namespace

TEST_CASE("nn init: Linear is kaiming_uniform(a = sqrt 5) with fan_in bias bounds", "[nn]") {
  Generator g(123);
  Linear lin(256, 512, true, &g);
  check_uniform(lin.weight(), 1.0 / 16.0);
  check_uniform(lin.bias(), 1.0 / 16.0);
  Linear wide(100, 2000, true, &g);
  check_uniform(wide.weight(), 0.1);
}

TEST_CASE("nn init: Conv2d uses fan_in = in / groups * kh * kw", "[nn]") {
  Generator g(7);
  Conv2dOptions o;
  o.groups = 2;
  Conv2d c(32, 256, 3, o, &g);  // fan_in = 16 * 9 = 144
  CHECK(c.weight().shape() == Shape{256, 16, 3, 3});
  check_uniform(c.weight(), 1.0 / 12.0);
  Conv2d c2(8, 4096, {1, 2}, {}, &g);  // fan_in = 16
  check_uniform(c2.bias(), 0.25);
  CHECK(init::fans({8, 3, 5, 5}) == std::pair<int64_t, int64_t>{75, 200});
  const double gain_relu = std::sqrt(2.0), bound = gain_relu * std::sqrt(3.0 / 400.0);
  check_uniform(init::kaiming_uniform({1000, 400}, 0.0, g), bound);
}

TEST_CASE("nn init: Embedding is N(0, 1), norms start at weight 1, bias 0", "[nn]") {
  Generator g(5);
  Embedding e(1000, 64, &g);
  const Stats s = stats(e.weight());
  const double n = static_cast<double>(s.n);
  CHECK(std::abs(s.mean) < 5.0 / std::sqrt(n));
  CHECK(std::abs(s.var - 1.0) < 5.0 * std::sqrt(2.0 / n));
  CHECK(s.max > 3.0);  // tails exist (P(all of 64000 below 3) ~ 0)
  BatchNorm2d bn(3);
  INGOT_REQUIRE_CLOSE(bn.weight(), ones({3}), 0.0, 0.0);
  INGOT_REQUIRE_CLOSE(bn.bias(), zeros({3}), 0.0, 0.0);
  INGOT_REQUIRE_CLOSE(bn.running_mean(), zeros({3}), 0.0, 0.0);
  INGOT_REQUIRE_CLOSE(bn.running_var(), ones({3}), 0.0, 0.0);
  CHECK(bn.num_batches_tracked().item() == 0);
  LayerNorm ln(Shape{2, 3});
  INGOT_REQUIRE_CLOSE(ln.weight(), ones({2, 3}), 0.0, 0.0);
  INGOT_REQUIRE_CLOSE(ln.bias(), zeros({2, 3}), 0.0, 0.0);
}

TEST_CASE("nn init: a seed reproduces a model, another seed changes it", "[nn]") {
  Generator a(99), b(99), c(100);
  auto ma = make_resnet(ResNetOptions{8, 4, 3, 10}, &a);
  auto mb = make_resnet(ResNetOptions{8, 4, 3, 10}, &b);
  auto mc = make_resnet(ResNetOptions{8, 4, 3, 10}, &c);
  const auto pa = ma->parameters(), pb = mb->parameters(), pc = mc->parameters();
  for (size_t i = 0; i < pa.size(); ++i) INGOT_REQUIRE_CLOSE(pa[i], pb[i], 0.0, 0.0);
  CHECK(test::excess_error(pa[0], pc[0], 0.0, 0.0) > 0.0);
  CHECK(a.state() == b.state());
}
