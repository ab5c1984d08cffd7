// Multi-tensor ops: global_norm over a list, the fused SGD update against its formula.
#include <catch2/catch.hpp>

#include "ingot/ops/creation.h"
#include "ingot/ops/multi_tensor.h"
#include "ingot/runtime/op_info.h"
#include "test_support.h"

namespace ingot {
namespace {

TEST_CASE("global_norm is the norm of all elements, as float32", "[ops][multi_tensor]") {
  const Tensor a = Tensor::from_vector<float>({3, 0}, {2});
  const Tensor b = Tensor::from_vector<double>({4}, {1, 1});
  const Tensor n = global_norm({a, b});
  CHECK(n.dtype() == DType::F32);
  CHECK(n.dim() == 0);
  CHECK(n.item() == Approx(5.0));
  CHECK(global_norm({}).item() == 0.0);
  CHECK_THROWS_AS(global_norm({zeros({2}, DType::I32)}), DTypeError);
}

TEST_CASE("sgd_update follows torch.optim.SGD", "[ops][multi_tensor]") {
  const Tensor p = Tensor::from_vector<float>({1, 2}, {2});
  const Tensor g = Tensor::from_vector<float>({0.5, -1}, {2});
  auto plain = make_attr<ingot_attr_sgd>();
  plain.lr = 0.1;
  sgd_update({p}, {g}, {}, plain);
  CHECK(p.to_vector<float>()[0] == Approx(0.95));
  CHECK(p.to_vector<float>()[1] == Approx(2.1));
  const Tensor buf = zeros({2});
  auto mom = make_attr<ingot_attr_sgd>();
  mom.lr = 0.1;
  mom.momentum = 0.9;
  mom.first_step = true;
  sgd_update({p}, {g}, {buf}, mom);
  CHECK(buf.to_vector<float>()[0] == Approx(0.5));  // the first step copies the gradient
  CHECK(p.to_vector<float>()[0] == Approx(0.90));
  CHECK_THROWS(sgd_update({p}, {g}, {}, mom));
  CHECK_THROWS_AS(sgd_update({p}, {zeros({3})}, {}, plain), ShapeError);
}

}  // namespace
}  // namespace ingot
