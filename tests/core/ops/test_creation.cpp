// Creation ops: fills and arange (dtype inference, lengths).
#include <catch2/catch.hpp>

#include "ingot/ops/creation.h"
#include "test_support.h"

namespace ingot {
namespace {

TEST_CASE("fills have the requested shape, dtype and value", "[ops][creation]") {
  const Tensor z = zeros({2, 3}, DType::I32);
  CHECK(z.shape() == Shape{2, 3});
  CHECK(z.dtype() == DType::I32);
  CHECK(z.to_vector<int32_t>() == std::vector<int32_t>(6, 0));
  CHECK(ones({2}, DType::Bool).to_vector<bool>() == std::vector<bool>{true, true});
  CHECK(full({}, 2.5).item() == 2.5);
  const Tensor like = full_like(z, 7);
  CHECK(like.dtype() == DType::I32);
  CHECK(like.to_vector<int32_t>() == std::vector<int32_t>(6, 7));
  CHECK(ones_like(zeros({1, 2}, DType::BF16)).dtype() == DType::BF16);
  CHECK_THROWS_AS(zeros({2, -1}), ShapeError);
}

TEST_CASE("arange infers int64 for whole numbers, like torch", "[ops][creation]") {
  CHECK(arange(5).dtype() == DType::I64);
  CHECK(arange(5).to_vector<int64_t>() == std::vector<int64_t>{0, 1, 2, 3, 4});
  CHECK(arange(0, 1, 0.25).dtype() == DType::F32);
  CHECK(arange(0, 1, 0.25).to_vector<double>() == std::vector<double>{0, 0.25, 0.5, 0.75});
  CHECK(arange(5, 0, -2).to_vector<int64_t>() == std::vector<int64_t>{5, 3, 1});
  CHECK(arange(3, 3).numel() == 0);
  CHECK(arange(0, 3, 1, DType::F64).dtype() == DType::F64);
  CHECK_THROWS(arange(0, 3, 0));
}

}  // namespace
}  // namespace ingot
