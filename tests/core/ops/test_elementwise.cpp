// Elementwise ops: PyTorch's type promotion, broadcast shape inference and errors, values.
#include <catch2/catch.hpp>

#include <cmath>

#include "ingot/ops/creation.h"
#include "ingot/ops/elementwise.h"
#include "test_support.h"

namespace ingot {
namespace {

Tensor vec(std::vector<double> v) { return Tensor::from_vector(v, Shape{static_cast<int64_t>(v.size())}); }

TEST_CASE("binary ops promote like torch", "[ops][promotion]") {
  const Tensor i32 = full({2}, 3, DType::I32);
  const Tensor i64 = full({2}, 3, DType::I64);
  const Tensor f32 = full({2}, 1.5, DType::F32);
  const Tensor f16 = full({2}, 1.5, DType::F16);
  const Tensor bf16 = full({2}, 1.5, DType::BF16);
  const Tensor u8 = full({2}, 2, DType::U8);
  const Tensor i8 = full({2}, -2, DType::I8);
  const Tensor b = full({2}, 1, DType::Bool);
  CHECK((i32 + f32).dtype() == DType::F32);
  CHECK((i32 + i64).dtype() == DType::I64);
  CHECK((f16 + bf16).dtype() == DType::F32);
  CHECK((u8 + i8).dtype() == DType::I32);  // torch gives int16; Ingot has none
  CHECK((f16 + i64).dtype() == DType::F16);
  CHECK((b + i32).dtype() == DType::I32);
  CHECK((i32 + f32).to_vector<double>() == std::vector<double>{4.5, 4.5});
}

TEST_CASE("tensor-scalar ops raise the category, never the width", "[ops][promotion]") {
  const Tensor i64 = full({2}, 3, DType::I64);
  CHECK((i64 + 2.5).dtype() == DType::F32);
  CHECK((i64 + 2.5).to_vector<double>() == std::vector<double>{5.5, 5.5});
  CHECK((full({2}, 1, DType::F16) + 2.5).dtype() == DType::F16);
  CHECK((2.0 * full({2}, 1, DType::BF16)).dtype() == DType::BF16);
  CHECK((full({2}, 1, DType::F64) * 2.0).dtype() == DType::F64);
  CHECK((1.0 - full({2}, 4, DType::F32)).to_vector<double>() == std::vector<double>{-3, -3});
  CHECK((8.0 / full({2}, 4, DType::F32)).to_vector<double>() == std::vector<double>{2, 2});
  CHECK(gt(i64, 2.5).dtype() == DType::Bool);
}

TEST_CASE("integer and bool C++ scalars promote like Python ints and bools", "[ops][promotion]") {
  const Tensor i64 = full({2}, 3, DType::I64);
  const Tensor i32 = full({2}, 3, DType::I32);
  CHECK((i64 + 1).dtype() == DType::I64);
  CHECK((i64 + 1).to_vector<int64_t>() == std::vector<int64_t>{4, 4});
  CHECK((2 * i32).dtype() == DType::I32);
  CHECK((i32 / 2).dtype() == DType::F32);  // true division
  CHECK((i32 / 2).to_vector<double>() == std::vector<double>{1.5, 1.5});
  CHECK((full({2}, 1, DType::F16) * 2).dtype() == DType::F16);
  const Tensor b = Tensor::from_vector<bool>({true, false}, {2});
  CHECK((b + 1).dtype() == DType::I64);
  CHECK((b + 1).to_vector<int64_t>() == std::vector<int64_t>{2, 1});
  CHECK(logical_and(b, true).dtype() == DType::Bool);
  CHECK(where(b, i32, 0).dtype() == DType::I32);
  CHECK(where(b, i32, 0).to_vector<int32_t>() == std::vector<int32_t>{3, 0});
}

TEST_CASE("bool arithmetic follows torch", "[ops][promotion]") {
  const Tensor a = Tensor::from_vector<bool>({true, true, false, false}, {4});
  const Tensor b = Tensor::from_vector<bool>({true, false, true, false}, {4});
  const Tensor sum = a + b;
  CHECK(sum.dtype() == DType::Bool);
  CHECK(sum.to_vector<bool>() == std::vector<bool>{true, true, true, false});
  CHECK((a * b).to_vector<bool>() == std::vector<bool>{true, false, false, false});
  CHECK_THROWS_AS(a - b, DTypeError);
  CHECK_THROWS_AS(neg(a), DTypeError);
  CHECK(lt(b, a).to_vector<bool>() == std::vector<bool>{false, true, false, false});
  CHECK(gt(a, b).to_vector<bool>() == std::vector<bool>{false, true, false, false});
}

TEST_CASE("division and pow of integers are true division in float32", "[ops][promotion]") {
  const Tensor a = Tensor::from_vector<int32_t>({1, 3}, {2});
  const Tensor b = Tensor::from_vector<int32_t>({2, 2}, {2});
  CHECK(div(a, b).dtype() == DType::F32);
  CHECK(div(a, b).to_vector<double>() == std::vector<double>{0.5, 1.5});
  CHECK(pow(a, b).to_vector<double>() == std::vector<double>{1, 9});
}

TEST_CASE("unary float ops promote integers, rounding keeps them", "[ops][promotion]") {
  const Tensor i = Tensor::from_vector<int64_t>({0, 1}, {2});
  CHECK(exp(i).dtype() == DType::F32);
  CHECK(sigmoid(i).dtype() == DType::F32);
  CHECK(floor(i).dtype() == DType::I64);
  CHECK(abs(i).dtype() == DType::I64);
  CHECK(floor(vec({1.5, -1.5})).to_vector<double>() == std::vector<double>{1, -2});
  CHECK(round(vec({0.5, 1.5, 2.5})).to_vector<double>() == std::vector<double>{0, 2, 2});
  CHECK(logical_not(i).dtype() == DType::Bool);
}

TEST_CASE("comparisons output bool and broadcast", "[ops][shape]") {
  const Tensor a = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor b = Tensor::from_vector<int32_t>({2, 2, 2}, {3});
  const Tensor r = ge(a, b);
  CHECK(r.dtype() == DType::Bool);
  CHECK(r.shape() == Shape{2, 3});
  CHECK(r.to_vector<bool>() == std::vector<bool>{false, true, true, true, true, true});
  CHECK(eq(a, 2.0).to_vector<bool>() == std::vector<bool>{false, true, false, false, false, false});
}

TEST_CASE("broadcast errors name both shapes", "[ops][shape]") {
  const Tensor a = zeros({2, 3});
  const Tensor b = zeros({4});
  try {
    (void)add(a, b);
    FAIL("expected a ShapeError");
  } catch (const ShapeError& e) {
    const std::string msg = e.what();
    CHECK(msg.find("add") != std::string::npos);
    CHECK(msg.find("[2, 3]") != std::string::npos);
    CHECK(msg.find("[4]") != std::string::npos);
  }
  CHECK((zeros({2, 1, 4}) * zeros({3, 1})).shape() == Shape{2, 3, 4});
}

TEST_CASE("unary values: relu, gelu, softplus, clamp, sign", "[ops][values]") {
  const Tensor x = vec({-2.0, -0.5, 0.0, 0.5, 30.0});
  CHECK(relu(x).to_vector<double>() == std::vector<double>{0, 0, 0, 0.5, 30});
  CHECK(sign(x).to_vector<double>() == std::vector<double>{-1, -1, 0, 1, 1});
  const auto g = gelu(x).to_vector<double>();
  CHECK(g[3] == Approx(0.5 * 0.5 * (1 + std::erf(0.5 / std::sqrt(2.0)))));
  const auto sp = softplus(x).to_vector<double>();
  CHECK(sp[0] == Approx(std::log1p(std::exp(-2.0))));
  CHECK(sp[4] == 30.0);  // above the threshold: linear
  CHECK(clamp(x, -1.0, 1.0).to_vector<double>() == std::vector<double>{-1, -0.5, 0, 0.5, 1});
  CHECK(clamp(x, std::nullopt, 0.0).to_vector<double>() == std::vector<double>{-2, -0.5, 0, 0, 0});
  const Tensor xi = Tensor::from_vector<int32_t>({-3, 3}, {2});
  CHECK(clamp(xi, -1.0, 1.0).dtype() == DType::I32);
  CHECK(clamp(xi, -0.5, 0.5).dtype() == DType::F32);
}

TEST_CASE("where broadcasts and promotes", "[ops][values]") {
  const Tensor cond = Tensor::from_vector<bool>({true, false}, {2, 1});
  const Tensor a = Tensor::from_vector<int32_t>({1, 2, 3}, {3});
  const Tensor r = where(cond, a, 0.5);
  CHECK(r.dtype() == DType::F32);
  CHECK(r.shape() == Shape{2, 3});
  CHECK(r.to_vector<double>() == std::vector<double>{1, 2, 3, 0.5, 0.5, 0.5});
}

TEST_CASE("elementwise ops read non-contiguous inputs", "[ops][values]") {
  const Tensor a = Tensor::from_vector<double>({1, 2, 3, 4, 5, 6}, {2, 3}).transpose(0, 1);
  CHECK((a - 1.0).to_vector<double>() == std::vector<double>{0, 3, 1, 4, 2, 5});
}

}  // namespace
}  // namespace ingot
