// The autograd tape: backward through recorded ops and views, accumulation, grad mode, detach,
// retain_graph, retain_grad, and whole-function gradients checked by finite differences (f64).
#include <catch2/catch.hpp>

#include <functional>

#include "grad_check.h"
#include "ingot/autograd/engine.h"
#include "ingot/autograd/node.h"
#include "ingot/base/grad_mode.h"
#include "ingot/ops/ops.h"
#include "test_support.h"

namespace ingot {
namespace {

using test::rnd;

Tensor leaf(const Shape& s, double lo = -1.0, double hi = 1.0) { return rnd(s, lo, hi).set_requires_grad(true); }

/// Checks the tape's gradient of the scalar f(params) against central differences for every
/// element of every parameter (f64).
void check_fd(const std::vector<Tensor>& params, const std::function<Tensor()>& f) {
  for (const Tensor& p : params) p.set_grad(Tensor());
  f().backward();
  for (size_t k = 0; k < params.size(); ++k) {
    const Tensor& p = params[k];
    REQUIRE(p.grad().defined());
    const std::vector<double> analytic = p.grad().to_vector<double>();
    double* data = p.data<double>();  // contiguous leaves
    const double eps = 1e-6;
    for (int64_t i = 0; i < p.numel(); ++i) {
      NoGradGuard no_grad;
      const double keep = data[i];
      data[i] = keep + eps;
      const double up = f().item();
      data[i] = keep - eps;
      const double down = f().item();
      data[i] = keep;
      const double numeric = (up - down) / (2 * eps);
      INFO("param " << k << " element " << i);
      REQUIRE(std::abs(numeric - analytic[static_cast<size_t>(i)]) <= 1e-6 * (1 + std::abs(numeric)));
    }
  }
}

TEST_CASE("backward of a product and a sum gives 2x", "[tape]") {
  const Tensor x = leaf({2, 3});
  sum(x * x).backward();
  INGOT_REQUIRE_CLOSE(x.grad(), x * 2.0, 1e-12, 0);
  CHECK(x.is_leaf());
  CHECK_FALSE((x * x).is_leaf());
  CHECK((x * x).grad_fn()->name() == "mulBackward");
}

TEST_CASE("gradients accumulate across backward calls and over shared uses", "[tape]") {
  const Tensor x = leaf({4});
  const Tensor y = x * 3.0 + x;  // x used twice
  sum(y).backward();
  INGOT_REQUIRE_CLOSE(x.grad(), full({4}, 4.0, DType::F64), 0, 0);
  sum(x * 2.0).backward();
  INGOT_REQUIRE_CLOSE(x.grad(), full({4}, 6.0, DType::F64), 0, 0);
  x.set_grad(Tensor());
  CHECK_FALSE(x.grad().defined());
}

TEST_CASE("a gradient never aliases another leaf's gradient", "[tape]") {
  const Tensor a = leaf({3}), b = leaf({3});
  sum(a + b).backward();
  REQUIRE(a.grad().defined());
  CHECK(a.grad().storage() != b.grad().storage());
}

TEST_CASE("no-grad mode, detach and requires_grad rules", "[tape]") {
  const Tensor x = leaf({3});
  {
    NoGradGuard g;
    CHECK_FALSE((x * 2.0).requires_grad());
    {
      EnableGradGuard e;
      CHECK((x * 2.0).requires_grad());
    }
  }
  CHECK(GradMode::is_enabled());
  const Tensor d = (x * 2.0).detach();
  CHECK_FALSE(d.requires_grad());
  CHECK(d.is_leaf());
  CHECK(d.storage() != nullptr);
  CHECK_THROWS_WITH((x * 2.0).set_requires_grad(false), Catch::Contains("only a leaf"));
  CHECK_THROWS_WITH(Tensor::from_vector<int64_t>({1, 2}, {2}).set_requires_grad(true), Catch::Contains("floating"));
  CHECK_FALSE(gt(x, 0.0).requires_grad());  // comparisons are not differentiable
  CHECK_THROWS_WITH(x.fill_(1.0), Catch::Contains("NoGradGuard"));
  {
    NoGradGuard g;
    x.fill_(1.0);  // allowed: what optimizers and initialisers do
  }
}

TEST_CASE("backward needs a gradient for non-scalars and frees the graph", "[tape]") {
  const Tensor x = leaf({2, 2});
  const Tensor y = x * x;
  CHECK_THROWS_WITH(y.backward(), Catch::Contains("pass the gradient"));
  y.backward(ones_like(y), /*retain_graph=*/true);
  y.backward(ones_like(y));
  INGOT_REQUIRE_CLOSE(x.grad(), x * 4.0, 1e-12, 0);
  CHECK_THROWS_WITH(y.backward(ones_like(y)), Catch::Contains("second time"));
  CHECK_THROWS_WITH(rnd({1}).backward(), Catch::Contains("does not require grad"));
}

TEST_CASE("retain_grad keeps a non-leaf's gradient", "[tape]") {
  const Tensor x = leaf({3});
  const Tensor h = x * 2.0;
  h.retain_grad();
  sum(h * h).backward();
  INGOT_REQUIRE_CLOSE(h.grad(), h * 2.0, 1e-12, 0);
}

TEST_CASE("the graph is freed with its tensors (no reference cycles)", "[tape]") {
  const Tensor x = leaf({3});
  std::weak_ptr<autograd::Node> node;
  {
    const Tensor y = exp(x);  // exp saves its output
    node = y.grad_fn();
    CHECK_FALSE(node.expired());
  }
  CHECK(node.expired());
}

TEST_CASE("views are differentiable", "[tape]") {
  const Tensor x = leaf({2, 3, 4});
  const Tensor w = rnd({4, 3, 2});
  check_fd({x}, [&] { return sum(x.permute({2, 1, 0}) * w); });
  check_fd({x}, [&] { return sum(x.transpose(0, 2).contiguous().reshape({4, 6}) * w.reshape({4, 6})); });
  check_fd({x}, [&] { return sum(x.slice(2, 1, 4, 2) * x.slice(2, 0, 2)); });
  check_fd({x}, [&] { return sum(x.select(1, -1) * x.select(1, 0)); });
  const Tensor v = rnd({5, 3, 4});
  check_fd({x}, [&] { return sum(x.slice(0, 0, 1).expand({5, 3, 4}) * v); });
  check_fd({x}, [&] { return sum(x.unsqueeze(1).squeeze(1).flatten(1) * x.view({2, 12})); });
  check_fd({x}, [&] { return sum(x.clone() * x); });
}

TEST_CASE("a small network's gradients match finite differences", "[tape]") {
  const Tensor x = rnd({5, 4});
  const Tensor w1 = leaf({6, 4}), b1 = leaf({6}), w2 = leaf({3, 6}), b2 = leaf({3});
  const Tensor target = Tensor::from_vector<int64_t>({0, 2, 1, 1, 0}, {5, 1});
  check_fd({w1, b1, w2, b2}, [&] {
    const Tensor h = tanh(linear(x, w1, b1));
    const Tensor logp = log_softmax(linear(h, w2, b2), 1);
    return -mean(gather(logp, 1, target));
  });
}

TEST_CASE("a conv net's gradients match finite differences", "[tape]") {
  const Tensor x = rnd({2, 2, 6, 6});
  const Tensor w = leaf({3, 2, 3, 3}), b = leaf({3});
  const Tensor gamma = leaf({3}, 0.5, 1.5), beta = leaf({3});
  const Tensor fc = leaf({2, 27});
  Conv2dParams cp;
  cp.padding = {1, 1};
  Pool2dParams pp;
  pp.kernel = {2, 2};
  const Tensor u = rnd({2, 2});
  check_fd({w, b, gamma, beta, fc}, [&] {
    const Tensor c = conv2d(x, w, b, cp);
    const Tensor n = batch_norm(c, gamma, beta, Tensor(), Tensor(), /*training=*/true).y;
    const Tensor p = max_pool2d(sigmoid(n), pp).y;
    return sum(linear(p.flatten(1), fc) * u);
  });
}

TEST_CASE("two roots backpropagate together", "[tape]") {
  const Tensor x = leaf({3});
  const Tensor a = sum(x * x), b = sum(x * 3.0);
  autograd::backward({a, b});
  INGOT_REQUIRE_CLOSE(x.grad(), x * 2.0 + 3.0, 1e-12, 0);
}

}  // namespace
}  // namespace ingot
