// Normalisation ops: softmax family, layer norm and batch norm shapes, values and running stats.
#include <catch2/catch.hpp>

#include <cmath>

#include "ingot/ops/creation.h"
#include "ingot/ops/elementwise.h"
#include "ingot/ops/norm.h"
#include "ingot/ops/reduce.h"
#include "test_support.h"

namespace ingot {
namespace {

Tensor rnd(const Shape& s, uint64_t seed) { return test::random_tensor(s, DType::F64, seed, -2, 2); }

TEST_CASE("softmax rows sum to one, log_softmax is its log", "[ops][norm]") {
  const Tensor x = rnd({3, 5}, 1);
  const Tensor y = softmax(x, -1);
  INGOT_REQUIRE_CLOSE(sum(y, {1}), ones({3}, DType::F64), 1e-12, 0);
  INGOT_REQUIRE_CLOSE(log_softmax(x, 1), log(y), 1e-12, 1e-12);
  CHECK_THROWS_AS(softmax(zeros({2}, DType::I64), 0), DTypeError);
  CHECK_THROWS_AS(softmax(x, 2), ShapeError);
}

TEST_CASE("softmax backward ops follow their formulas", "[ops][norm]") {
  const Tensor y = softmax(rnd({2, 4}, 2), 1);
  const Tensor g = rnd({2, 4}, 3);
  INGOT_REQUIRE_CLOSE(softmax_backward(y, g, 1), y * (g - sum(g * y, {1}, true)), 1e-12, 1e-12);
  const Tensor ly = log(y);
  INGOT_REQUIRE_CLOSE(log_softmax_backward(ly, g, 1), g - exp(ly) * sum(g, {1}, true), 1e-12, 1e-12);
}

TEST_CASE("layer_norm normalises the trailing dims", "[ops][norm]") {
  const Tensor x = rnd({2, 3, 4}, 4);
  const LayerNormResult r = layer_norm(x, {3, 4});
  CHECK(r.mean.shape() == Shape{2, 1, 1});
  CHECK(r.rstd.shape() == Shape{2, 1, 1});
  INGOT_REQUIRE_CLOSE(mean(r.y, {1, 2}), zeros({2}, DType::F64), 1e-12, 0);
  const Tensor expected = (x - mean(x, {1, 2}, true)) * r.rstd;
  INGOT_REQUIRE_CLOSE(r.y, expected, 1e-12, 1e-12);
  const Tensor w = rnd({4}, 5), b = rnd({4}, 6);
  const LayerNormResult a = layer_norm(x, {4}, w, b);
  const LayerNormResult plain = layer_norm(x, {4});
  INGOT_REQUIRE_CLOSE(a.y, plain.y * w + b, 1e-12, 1e-12);
  CHECK(layer_norm(x.to(DType::F16), {4}).mean.dtype() == DType::F32);
  CHECK_THROWS_AS(layer_norm(x, {3}), ShapeError);
  CHECK_THROWS_AS(layer_norm(x, {4}, rnd({3}, 7)), ShapeError);
}

TEST_CASE("batch_norm training uses batch statistics and updates running ones", "[ops][norm]") {
  const Tensor x = rnd({4, 3, 2}, 8);
  const Tensor rm = zeros({3}, DType::F64), rv = ones({3}, DType::F64);
  const BatchNormResult r = batch_norm(x, Tensor(), Tensor(), rm, rv, true, 0.1, 1e-5);
  CHECK(r.save_mean.shape() == Shape{3});
  const Tensor batch_mean = mean(x, {0, 2});
  INGOT_REQUIRE_CLOSE(r.save_mean, batch_mean, 1e-12, 1e-12);
  INGOT_REQUIRE_CLOSE(rm, batch_mean * 0.1, 1e-12, 1e-12);
  INGOT_REQUIRE_CLOSE(mean(r.y, {0, 2}), zeros({3}, DType::F64), 1e-12, 0);
  // eval: running statistics
  const BatchNormResult e = batch_norm(x, Tensor(), Tensor(), rm, rv, false);
  const Tensor expected = (x - rm.reshape({1, 3, 1})) / sqrt(rv.reshape({1, 3, 1}) + 1e-5);
  INGOT_REQUIRE_CLOSE(e.y, expected, 1e-12, 1e-12);
  CHECK_THROWS(batch_norm(x, Tensor(), Tensor(), Tensor(), Tensor(), false));
  // training without running statistics is allowed
  CHECK(batch_norm(x, Tensor(), Tensor(), Tensor(), Tensor(), true).y.shape() == x.shape());
}

}  // namespace
}  // namespace ingot
