// matmul / linear / conv2d: torch.matmul's 1-D and batch rules, fused epilogues, shape errors.
#include <catch2/catch.hpp>

#include "ingot/ops/creation.h"
#include "ingot/ops/elementwise.h"
#include "ingot/ops/linalg.h"
#include "ingot/ops/reduce.h"
#include "test_support.h"

namespace ingot {
namespace {

Tensor rnd(const Shape& s, uint64_t seed) { return test::random_tensor(s, DType::F64, seed); }

TEST_CASE("matmul shapes follow torch.matmul", "[ops][linalg]") {
  CHECK(matmul(zeros({3}), zeros({3})).shape() == Shape{});
  CHECK(matmul(zeros({3}), zeros({3, 4})).shape() == Shape{4});
  CHECK(matmul(zeros({2, 3}), zeros({3})).shape() == Shape{2});
  CHECK(matmul(zeros({5, 2, 3}), zeros({3, 4})).shape() == Shape{5, 2, 4});
  CHECK(matmul(zeros({2, 1, 2, 3}), zeros({5, 3, 4})).shape() == Shape{2, 5, 2, 4});
  CHECK(matmul(zeros({3}), zeros({5, 3, 4})).shape() == Shape{5, 4});
}

TEST_CASE("matmul errors name both shapes", "[ops][linalg]") {
  try {
    (void)matmul(zeros({2, 3}), zeros({4, 5}));
    FAIL("expected a ShapeError");
  } catch (const ShapeError& e) {
    const std::string msg = e.what();
    CHECK(msg.find("[2, 3]") != std::string::npos);
    CHECK(msg.find("[4, 5]") != std::string::npos);
  }
  CHECK_THROWS_AS(matmul(zeros({2, 2, 3}), zeros({3, 3, 4})), ShapeError);
  CHECK_THROWS_AS(matmul(zeros({2, 3}, DType::I64), zeros({3, 2}, DType::I64)), DTypeError);
}

TEST_CASE("matmul values, promotion and the vector cases", "[ops][linalg]") {
  const Tensor a = Tensor::from_vector<double>({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor b = Tensor::from_vector<float>({1, 0, 0, 1, 1, 1}, {3, 2});
  const Tensor y = matmul(a, b);
  CHECK(y.dtype() == DType::F64);
  CHECK(y.to_vector<double>() == std::vector<double>{4, 5, 10, 11});
  const Tensor v = Tensor::from_vector<double>({1, 1, 1}, {3});
  CHECK(matmul(a, v).to_vector<double>() == std::vector<double>{6, 15});
  CHECK(matmul(v, v).item() == 3.0);
}

TEST_CASE("linear is x @ w^T + b and matches matmul_ex with fused relu", "[ops][linalg]") {
  const Tensor x = rnd({4, 3}, 1), w = rnd({5, 3}, 2), bias = rnd({5}, 3);
  const Tensor expected = matmul(x, w.transpose(0, 1)) + bias;
  INGOT_REQUIRE_CLOSE(linear(x, w, bias), expected, 1e-12, 1e-12);
  INGOT_REQUIRE_CLOSE(matmul_ex(x, w.transpose(0, 1), bias, Activation::Relu), relu(expected), 1e-12, 1e-12);
  INGOT_REQUIRE_CLOSE(matmul_ex(x, w.transpose(0, 1), bias, Activation::Gelu), gelu(expected), 1e-12, 1e-12);
  CHECK(linear(rnd({2, 6, 3}, 4), w).shape() == Shape{2, 6, 5});
  CHECK(linear(rnd({3}, 5), w).shape() == Shape{5});
  CHECK_THROWS_AS(linear(x, rnd({5, 4}, 6)), ShapeError);
  CHECK_THROWS_AS(linear(x, w, rnd({4}, 7)), ShapeError);
}

TEST_CASE("conv2d output sizes and checks", "[ops][linalg]") {
  Conv2dParams p;
  p.stride = {2, 2};
  p.padding = {1, 1};
  CHECK(conv2d_output_shape({1, 3, 32, 32}, {8, 3, 3, 3}, p) == Shape{1, 8, 16, 16});
  p.dilation = {2, 2};
  CHECK(conv2d_output_shape({1, 3, 7, 7}, {8, 3, 3, 3}, p) == Shape{1, 8, 3, 3});
  Conv2dParams g;
  g.groups = 2;
  CHECK(conv2d_output_shape({2, 4, 5, 5}, {6, 2, 3, 3}, g) == Shape{2, 6, 3, 3});
  CHECK_THROWS_AS(conv2d_output_shape({2, 4, 5, 5}, {6, 4, 3, 3}, g), ShapeError);
  CHECK_THROWS_AS(conv2d(zeros({1, 3, 2, 2}), zeros({1, 3, 3, 3})), ShapeError);
  CHECK_THROWS_AS(conv2d(zeros({3, 5, 5}), zeros({1, 3, 3, 3})), ShapeError);
}

TEST_CASE("conv2d with a 1x1 kernel is a matmul over channels", "[ops][linalg]") {
  const Tensor x = rnd({2, 3, 2, 2}, 8), w = rnd({4, 3, 1, 1}, 9), bias = rnd({4}, 10);
  const Tensor y = conv2d(x, w, bias);
  const Tensor xm = x.permute({0, 2, 3, 1}).reshape({8, 3});
  const Tensor expected = linear(xm, w.reshape({4, 3}), bias).reshape({2, 2, 2, 4}).permute({0, 3, 1, 2});
  INGOT_REQUIRE_CLOSE(y, expected, 1e-12, 1e-12);
  const Tensor gx = conv2d_backward_data(ones_like(y), w, x.shape(), {});
  CHECK(gx.shape() == x.shape());
  const Tensor gw = conv2d_backward_weight(x, ones_like(y), w.shape(), {});
  INGOT_REQUIRE_CLOSE(gw.reshape({4, 3}), sum(x, {0, 2, 3}).reshape({1, 3}).expand({4, 3}), 1e-12, 1e-12);
}

}  // namespace
}  // namespace ingot
