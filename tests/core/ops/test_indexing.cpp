// Shape and indexing ops: concat, pad (torch order, negative pads), gather, index_select,
// scatter_add, sort, topk.
#include <catch2/catch.hpp>

#include "ingot/ops/creation.h"
#include "ingot/ops/indexing.h"
#include "test_support.h"

namespace ingot {
namespace {

Tensor iota(const Shape& s) { return arange(0, static_cast<double>(s.numel()), 1, DType::F32).reshape(s); }
using V = std::vector<double>;

TEST_CASE("concat joins along an axis and promotes", "[ops][indexing]") {
  const Tensor a = iota({2, 2});
  const Tensor b = full({2, 1}, 9, DType::I32);
  const Tensor y = concat({a, b}, -1);
  CHECK(y.shape() == Shape{2, 3});
  CHECK(y.dtype() == DType::F32);
  CHECK(y.to_vector<double>() == V{0, 1, 9, 2, 3, 9});
  CHECK(concat({a, a}, 0).shape() == Shape{4, 2});
  CHECK_THROWS_AS(concat({a, zeros({3, 1})}, 1), ShapeError);
  CHECK_THROWS_AS(concat({}, 0), ShapeError);
}

TEST_CASE("pad uses torch's order, last dim first", "[ops][indexing]") {
  const Tensor x = iota({2, 2});
  const Tensor y = pad(x, {1, 0}, -1);  // last dim: 1 before
  CHECK(y.shape() == Shape{2, 3});
  CHECK(y.to_vector<double>() == V{-1, 0, 1, -1, 2, 3});
  const Tensor z = pad(x, {0, 0, 0, 1});  // first dim: 1 after
  CHECK(z.to_vector<double>() == V{0, 1, 2, 3, 0, 0});
  const Tensor crop = pad(iota({3, 3}), {-1, 1});  // crop one column on the left, pad one on the right
  CHECK(crop.to_vector<double>() == V{1, 2, 0, 4, 5, 0, 7, 8, 0});
  CHECK_THROWS_AS(pad(x, {1}), ShapeError);
  CHECK_THROWS_AS(pad(x, {1, 1, 1, 1, 1, 1}), ShapeError);
}

TEST_CASE("gather, index_select, scatter_add", "[ops][indexing]") {
  const Tensor x = iota({3, 4});
  const Tensor idx = Tensor::from_vector<int64_t>({2, 0, 1, 2}, {1, 4});
  CHECK(gather(x, 0, idx).to_vector<double>() == V{8, 1, 6, 11});
  const Tensor cols = Tensor::from_vector<int32_t>({3, 0}, {2});
  const Tensor sel = index_select(x, 1, cols);
  CHECK(sel.shape() == Shape{3, 2});
  CHECK(sel.to_vector<double>() == V{3, 0, 7, 4, 11, 8});
  const Tensor self = zeros({2, 3});
  const Tensor sidx = Tensor::from_vector<int64_t>({0, 0, 2, 1}, {2, 2});
  const Tensor src = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK(scatter_add(self, 1, sidx, src).to_vector<double>() == V{3, 0, 0, 0, 5, 4});
  CHECK_THROWS_AS(gather(x, 0, Tensor::from_vector<float>({0}, {1, 1})), DTypeError);
  CHECK_THROWS_AS(gather(x, 0, Tensor::from_vector<int64_t>({0}, {1})), ShapeError);
}

TEST_CASE("sort and topk return values and int64 indices", "[ops][indexing]") {
  const Tensor x = Tensor::from_vector<float>({3, 1, 2, 0, 5, 4}, {2, 3});
  const SortResult s = sort(x, 1);
  CHECK(s.values.to_vector<double>() == V{1, 2, 3, 0, 4, 5});
  CHECK(s.indices.dtype() == DType::I64);
  CHECK(s.indices.to_vector<int64_t>() == std::vector<int64_t>{1, 2, 0, 0, 2, 1});
  const SortResult d = sort(x, 0, true);
  CHECK(d.values.to_vector<double>() == V{3, 5, 4, 0, 1, 2});
  const SortResult t = topk(x, 2, -1);
  CHECK(t.values.shape() == Shape{2, 2});
  CHECK(t.values.to_vector<double>() == V{3, 2, 5, 4});
  CHECK(topk(x, 1, 1, false).values.to_vector<double>() == V{1, 0});
  CHECK_THROWS_AS(topk(x, 4, 1), ShapeError);
}

}  // namespace
}  // namespace ingot
