// cpu_onednn keeps a ResNet's tensors blocked: a residual add of blocked activations (or of a
// blocked one and a dense one), relu_bwd with either input blocked, and conv backward-data give
// blocked results whose values match plain element-wise arithmetic and the reference backend.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "ingot/ops/elementwise.h"
#include "ingot/ops/linalg.h"
#include "ingot/runtime/dispatch.h"
#include "ingot/runtime/plugin_loader.h"
#include "ingot/runtime/registry.h"
#include "test_support.h"

namespace ingot {
namespace {

using test::random_tensor;

bool have_onednn() { return test::plugin_backend_or_skip("cpu_onednn", "cpu_onednn") != nullptr; }

Conv2dParams pad1() {
  Conv2dParams p;
  p.padding = {1, 1};
  return p;
}

/// A conv output: cpu_onednn gives it its blocked layout.
Tensor blocked_activation(int64_t c, uint64_t seed) {
  const Tensor x = random_tensor({2, 3, 6, 6}, DType::F32, seed);
  const Tensor w = random_tensor({c, 3, 3, 3}, DType::F32, seed + 1);
  return conv2d(x, w, Tensor(), pad1());
}

/// The values of `t` in NCHW order. Reading a blocked tensor reorders it in place (Tensor::strided),
/// so pass a copy: `values(blocked_activation(c, seed))` recomputes an identical one.
std::vector<float> values(const Tensor& t) { return t.strided().contiguous().to_vector<float>(); }

}  // namespace

TEST_CASE("cpu_onednn residual add and relu_bwd stay blocked and compute the plain results", "[onednn]") {
  if (!have_onednn()) return;
  const Tensor a = blocked_activation(16, 10), b = blocked_activation(16, 20);
  REQUIRE(a.is_opaque());
  REQUIRE(b.is_opaque());
  const Tensor dense = random_tensor(a.shape(), DType::F32, 30);
  const std::vector<float> va = values(blocked_activation(16, 10)), vb = values(blocked_activation(16, 20));
  const std::vector<float> vd = values(dense);

  SECTION("add of two blocked activations") {
    const Tensor y = add(a, b);
    CHECK(y.is_opaque());
    const std::vector<float> vy = values(y);
    for (size_t i = 0; i < vy.size(); ++i) REQUIRE(vy[i] == va[i] + vb[i]);
  }
  SECTION("add of a blocked and a dense tensor, either order") {
    for (const bool blocked_first : {true, false}) {
      const Tensor y = blocked_first ? add(a, dense) : add(dense, a);
      CHECK(y.is_opaque());
      const std::vector<float> vy = values(y);
      for (size_t i = 0; i < vy.size(); ++i) REQUIRE(vy[i] == va[i] + vd[i]);
    }
  }
  SECTION("relu_bwd: blocked x with a dense or blocked gradient") {
    for (const bool blocked_grad : {false, true}) {
      const Tensor y = relu_backward(blocked_grad ? b : dense, a);
      CHECK(y.is_opaque());
      const std::vector<float>& vg = blocked_grad ? vb : vd;
      const std::vector<float> vy = values(y);
      for (size_t i = 0; i < vy.size(); ++i) REQUIRE(vy[i] == (va[i] > 0.f ? vg[i] : 0.f));
    }
    const Tensor y = relu_backward(a, dense);  // blocked gradient, dense x
    CHECK(y.is_opaque());
    const std::vector<float> vy = values(y);
    for (size_t i = 0; i < vy.size(); ++i) REQUIRE(vy[i] == (vd[i] > 0.f ? va[i] : 0.f));
  }
  SECTION("a dense output requested with run_op_into gets the blocked result reordered") {
    const Tensor y = Tensor::empty(a.shape());
    run_op_into(INGOT_OP_ADD, {a, b}, {y});
    const std::vector<float> vy = y.to_vector<float>();
    for (size_t i = 0; i < vy.size(); ++i) REQUIRE(vy[i] == va[i] + vb[i]);
  }
}

TEST_CASE("cpu_onednn conv backward-data gives a blocked gradient equal to the reference", "[onednn]") {
  if (!have_onednn()) return;
  const Tensor g = blocked_activation(16, 40);
  REQUIRE(g.is_opaque());
  const Tensor w = random_tensor({16, 8, 3, 3}, DType::F32, 41);
  const Shape x_shape{2, 8, 6, 6};
  const Tensor dx = conv2d_backward_data(g, w, x_shape, pad1());
  CHECK(dx.is_opaque());
  const Tensor expected = Tensor::empty(x_shape);
  const auto attr = conv2d_attr(pad1(), false, Activation::None);
  run_op_on(BackendRegistry::instance().reference(), INGOT_OP_CONV2D_BWD_DATA, {blocked_activation(16, 40).strided(), w},
            {expected}, &attr);
  INGOT_REQUIRE_CLOSE(dx.strided(), expected, 1e-4, 1e-4);
}

}  // namespace ingot
