// Reductions: output shapes with and without keepdim, dtypes, sum_to_shape, argmax.
#include <catch2/catch.hpp>

#include "ingot/ops/creation.h"
#include "ingot/ops/reduce.h"
#include "test_support.h"

namespace ingot {
namespace {

Tensor iota(const Shape& s) { return arange(0, static_cast<double>(s.numel()), 1, DType::F32).reshape(s); }

TEST_CASE("sum / mean shapes and values", "[ops][reduce]") {
  const Tensor x = iota({2, 3, 4});
  CHECK(sum(x).shape() == Shape{});
  CHECK(sum(x).item() == 276.0);
  CHECK(sum(x, {1}).shape() == Shape{2, 4});
  CHECK(sum(x, {1}, true).shape() == Shape{2, 1, 4});
  CHECK(sum(x, {-1, 0}).shape() == Shape{3});
  CHECK(sum(x, {-1, 0}).to_vector<double>() == std::vector<double>{60, 92, 124});
  CHECK(mean(x, {2}).to_vector<double>() == std::vector<double>{1.5, 5.5, 9.5, 13.5, 17.5, 21.5});
  CHECK_THROWS_AS(sum(x, {1, 1}), ShapeError);
  CHECK_THROWS_AS(sum(x, {3}), ShapeError);
}

TEST_CASE("sum of integers and bools is int64, mean of integers is an error", "[ops][reduce]") {
  const Tensor b = Tensor::from_vector<bool>({true, true, false}, {3});
  CHECK(sum(b).dtype() == DType::I64);
  CHECK(sum(b).item() == 2.0);
  CHECK(sum(full({2}, 3, DType::I32)).dtype() == DType::I64);
  CHECK_THROWS_AS(mean(full({2}, 3, DType::I32)), DTypeError);
}

TEST_CASE("max / min / argmax", "[ops][reduce]") {
  const Tensor x = Tensor::from_vector<float>({3, 9, 1, 7, 2, 9}, {2, 3});
  CHECK(max(x).item() == 9.0);
  CHECK(min(x, {1}).to_vector<double>() == std::vector<double>{1, 2});
  CHECK(max(x, {0}, true).shape() == Shape{1, 3});
  CHECK(argmax(x).item() == 1.0);
  CHECK(argmax(x, 1).to_vector<int64_t>() == std::vector<int64_t>{1, 2});
  CHECK(argmax(x, 0, true).shape() == Shape{1, 3});
  CHECK(argmax(x, 0).dtype() == DType::I64);
  CHECK_THROWS_AS(max(zeros({0, 2}), {0}), ShapeError);
}

TEST_CASE("sum_to_shape undoes broadcasting", "[ops][reduce]") {
  const Tensor g = iota({2, 3, 4});
  CHECK(sum_to_shape(g, {2, 3, 4}).same_tensor(g));
  CHECK(sum_to_shape(g, {4}).to_vector<double>() == std::vector<double>{60, 66, 72, 78});
  CHECK(sum_to_shape(g, {3, 1}).shape() == Shape{3, 1});
  CHECK(sum_to_shape(g, {3, 1}).to_vector<double>() == std::vector<double>{60, 92, 124});
  CHECK(sum_to_shape(g, {}).item() == 276.0);
  CHECK_THROWS_AS(sum_to_shape(g, {2, 4}), ShapeError);
  CHECK_THROWS_AS(sum_to_shape(g, {1, 2, 3, 4}), ShapeError);
}

}  // namespace
}  // namespace ingot
