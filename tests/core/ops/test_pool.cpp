// Pooling: output sizes (ceil_mode, padding), values, the max-pool workspace, adaptive pooling.
#include <catch2/catch.hpp>

#include "ingot/ops/creation.h"
#include "ingot/ops/pool.h"
#include "ingot/ops/reduce.h"
#include "test_support.h"

namespace ingot {
namespace {

Tensor iota(const Shape& s) { return arange(0, static_cast<double>(s.numel()), 1, DType::F64).reshape(s); }
using V = std::vector<double>;

TEST_CASE("pool output sizes follow torch", "[ops][pool]") {
  Pool2dParams p;
  p.kernel = {2, 2};
  CHECK(pool2d_output_shape({1, 1, 5, 5}, p) == Shape{1, 1, 2, 2});
  p.ceil_mode = true;
  CHECK(pool2d_output_shape({1, 1, 5, 5}, p) == Shape{1, 1, 3, 3});
  Pool2dParams q;
  q.kernel = {3, 3};
  q.stride = {2, 2};
  q.padding = {1, 1};
  q.ceil_mode = true;
  CHECK(pool2d_output_shape({1, 1, 6, 6}, q) == Shape{1, 1, 4, 4});
  q.stride = {3, 3};
  CHECK(pool2d_output_shape({1, 1, 5, 5}, q) == Shape{1, 1, 2, 2});  // a 3rd window would start in the padding
  q.padding = {2, 2};
  CHECK_THROWS_AS(pool2d_output_shape({1, 1, 6, 6}, q), ShapeError);
  CHECK_THROWS_AS(pool2d_output_shape({6, 6}, p), ShapeError);
}

TEST_CASE("max_pool2d values, workspace and backward", "[ops][pool]") {
  Pool2dParams p;
  p.kernel = {2, 2};
  const Tensor x = iota({1, 1, 4, 4});
  const MaxPool2dResult r = max_pool2d(x, p);
  CHECK(r.y.to_vector<double>() == V{5, 7, 13, 15});
  CHECK(r.workspace.dtype() == DType::I64);
  CHECK(r.workspace.to_vector<int64_t>() == std::vector<int64_t>{5, 7, 13, 15});
  const Tensor gx = max_pool2d_backward(ones_like(r.y), x, r.workspace, p);
  CHECK(sum(gx).item() == 4.0);
  CHECK(gx.to_vector<double>()[5] == 1.0);
}

TEST_CASE("avg_pool2d divisors and backward", "[ops][pool]") {
  Pool2dParams p;
  p.kernel = {2, 2};
  p.padding = {1, 1};
  const Tensor x = ones({1, 1, 2, 2}, DType::F64);
  CHECK(avg_pool2d(x, p).to_vector<double>() == V{0.25, 0.25, 0.25, 0.25});
  p.count_include_pad = false;
  CHECK(avg_pool2d(x, p).to_vector<double>() == V{1, 1, 1, 1});
  const Tensor gx = avg_pool2d_backward(ones({1, 1, 2, 2}, DType::F64), x.shape(), p);
  CHECK(gx.to_vector<double>() == V{1, 1, 1, 1});
}

TEST_CASE("adaptive_avg_pool2d, divisible and not", "[ops][pool]") {
  const Tensor x = iota({1, 2, 4, 4});
  const Tensor g = adaptive_avg_pool2d(x, {1, 1});
  CHECK(g.shape() == Shape{1, 2, 1, 1});
  CHECK(g.to_vector<double>() == V{7.5, 23.5});
  const Tensor y = adaptive_avg_pool2d(iota({1, 1, 3, 3}), {2, 2});
  // windows: rows [0,2) and [1,3), same for columns
  CHECK(y.to_vector<double>() == V{2, 3, 5, 6});
}

}  // namespace
}  // namespace ingot
