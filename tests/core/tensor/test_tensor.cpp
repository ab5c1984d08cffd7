// Tensor core: dtypes and promotion, views, copies, printing, allocator statistics.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>

#include "ingot/base/allocator.h"
#include "ingot/tensor/tensor.h"
#include "test_support.h"

using namespace ingot;

TEST_CASE("dtype sizes and names round-trip", "[dtype]") {
  for (int i = 0; i < kDTypeCount; ++i) {
    const auto t = static_cast<DType>(i);
    CHECK(dtype_from_name(dtype_name(t)) == t);
  }
  CHECK(dtype_size(DType::BF16) == 2);
  CHECK(dtype_size(DType::I64) == 8);
  CHECK_THROWS_AS(dtype_from_name("float128"), ConfigError);
}

TEST_CASE("type promotion follows torch.promote_types", "[dtype]") {
  CHECK(promote_types(DType::I32, DType::F32) == DType::F32);
  CHECK(promote_types(DType::I64, DType::F16) == DType::F16);
  CHECK(promote_types(DType::F16, DType::BF16) == DType::F32);
  CHECK(promote_types(DType::F16, DType::F64) == DType::F64);
  CHECK(promote_types(DType::Bool, DType::I8) == DType::I8);
  CHECK(promote_types(DType::U8, DType::I8) == DType::I32);  // torch: int16, which Ingot lacks
  CHECK(promote_types(DType::U8, DType::I64) == DType::I64);
  CHECK(promote_types(DType::I32, DType::I64) == DType::I64);
  CHECK(promote_types(DType::Bool, DType::Bool) == DType::Bool);
  CHECK(promote_with_scalar(DType::F16, ScalarKind::Floating) == DType::F16);
  CHECK(promote_with_scalar(DType::I32, ScalarKind::Floating) == DType::F32);
  CHECK(promote_with_scalar(DType::I32, ScalarKind::Integral) == DType::I32);
  CHECK(promote_with_scalar(DType::Bool, ScalarKind::Integral) == DType::I64);
}

TEST_CASE("half and bfloat16 conversions round to nearest even", "[dtype]") {
  CHECK(static_cast<float>(Half(1.0f)) == 1.0f);
  CHECK(static_cast<float>(Half(65504.0f)) == 65504.0f);
  CHECK(std::isinf(static_cast<float>(Half(65520.0f))));
  CHECK(static_cast<float>(Half(5.9604645e-08f)) == 5.9604645e-08f);  // smallest subnormal
  CHECK(Half(1.0f + 1.0f / 2048).bits == Half(1.0f).bits);            // tie -> even
  CHECK(static_cast<float>(BFloat16(1.0f + 1.0f / 256)) == 1.0f);      // tie -> even
  CHECK(static_cast<float>(BFloat16(3.0f)) == 3.0f);
  CHECK(std::isnan(static_cast<float>(BFloat16(std::nanf("")))));
}

TEST_CASE("half conversion agrees with the compiler's _Float16 on every value", "[dtype]") {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = Half::to_float(static_cast<uint16_t>(h));
    if (std::isnan(f)) continue;
    const _Float16 ref = static_cast<_Float16>(f);
    uint16_t ref_bits;
    std::memcpy(&ref_bits, &ref, 2);
    REQUIRE(Half::from_float(f) == ref_bits);
    // Halfway points between neighbouring halves must round to even like the compiler.
    const float next = Half::to_float(static_cast<uint16_t>(h + 1));
    if (h + 1 < 65536 && !std::isnan(next) && !std::isinf(next) && !std::isinf(f) && (h & 0x7fffu) != 0x7bffu) {
      const float mid = f + (next - f) / 2;
      const _Float16 r2 = static_cast<_Float16>(mid);
      std::memcpy(&ref_bits, &r2, 2);
      REQUIRE(Half::from_float(mid) == ref_bits);
    }
  }
}

TEST_CASE("views share storage and compute strides", "[tensor]") {
  std::vector<float> v(24);
  for (int i = 0; i < 24; ++i) v[i] = static_cast<float>(i);
  const Tensor t = Tensor::from_vector(v, {2, 3, 4});
  const Tensor p = t.permute({2, 0, 1});
  CHECK(p.shape() == Shape{4, 2, 3});
  CHECK(p.strides() == Shape{1, 12, 4});
  CHECK_FALSE(p.is_contiguous());
  CHECK(p.contiguous().to_vector<float>()[1] == 4.0f);
  const Tensor s = t.slice(2, 1, 4, 2);
  CHECK(s.shape() == Shape{2, 3, 2});
  CHECK(s.to_vector<float>() == std::vector<float>{1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23});
  CHECK(t.select(1, -1).to_vector<float>() == std::vector<float>{8, 9, 10, 11, 20, 21, 22, 23});
  CHECK(t.reshape({6, -1}).shape() == Shape{6, 4});
  CHECK(t.transpose(0, 1).reshape({-1}).to_vector<float>()[4] == 12.0f);  // reshape copies
  CHECK_THROWS_AS(t.transpose(0, 2).view({24}), ShapeError);
  CHECK(t.unsqueeze(0).shape() == Shape{1, 2, 3, 4});
  CHECK(t.unsqueeze(-1).shape() == Shape{2, 3, 4, 1});
  CHECK(t.unsqueeze(0).squeeze(0).shape() == t.shape());
  CHECK(t.flatten(1).shape() == Shape{2, 12});
  const Tensor e = Tensor::from_vector(std::vector<float>{1, 2, 3}, {3}).expand({2, 3});
  CHECK(e.strides() == Shape{0, 1});
  CHECK(e.contiguous().to_vector<float>() == std::vector<float>{1, 2, 3, 1, 2, 3});
  CHECK_THROWS_AS(t.reshape({5, -1}), ShapeError);
  CHECK_THROWS_AS(t.permute({0, 0, 1}), ShapeError);
}

TEST_CASE("copies, casts and fills", "[tensor]") {
  const Tensor t = Tensor::from_vector(std::vector<float>{1.5f, -2.7f, 0.0f, 3.2f}, {2, 2});
  CHECK(t.to(DType::I32).to_vector<int32_t>() == std::vector<int32_t>{1, -2, 0, 3});
  CHECK(t.to(DType::Bool).to_vector<bool>() == std::vector<bool>{true, true, false, true});
  CHECK(t.to(DType::BF16).to(DType::F32).to_vector<float>()[0] == 1.5f);
  const Tensor z = Tensor::empty({2, 3}, DType::F64);
  z.fill_(0.25);
  z.slice(1, 1, 2).copy_(Tensor::scalar(7.0, DType::F32));
  CHECK(z.to_vector<double>() == std::vector<double>{0.25, 7, 0.25, 0.25, 7, 0.25});
  CHECK(Tensor::scalar(3.0, DType::I64).item() == 3.0);
  CHECK_THROWS_AS(t.item(), ShapeError);
}

TEST_CASE("zero-size tensors", "[tensor]") {
  const Tensor t = Tensor::empty({0, 3});
  CHECK(t.numel() == 0);
  CHECK(t.reshape({3, 0}).shape() == Shape{3, 0});
  CHECK(t.clone().numel() == 0);
  CHECK(t.str() == "tensor([], size=[0, 3])");
}

TEST_CASE("printing looks like PyTorch", "[tensor]") {
  const Tensor t = Tensor::from_vector(std::vector<float>{1, 2.5f, -3, 4}, {2, 2});
  CHECK(t.str() == "tensor([[1.0000, 2.5000],\n        [-3.0000, 4.0000]])");
  CHECK(Tensor::from_vector(std::vector<int32_t>{1, 2}, {2}).str() == "tensor([1, 2], dtype=int32)");
  const Tensor big = Tensor::empty({5000});
  big.fill_(1.0);
  CHECK(big.str().find("...") != std::string::npos);
}

TEST_CASE("caching host allocator reuses blocks and keeps statistics", "[allocator]") {
  CachingHostAllocator a;
  void* p = a.allocate(1000);
  a.deallocate(p, 1000);
  void* q = a.allocate(1000);
  CHECK(p == q);
  auto s = a.stats();
  CHECK(s.allocations == 2);
  CHECK(s.cache_hits == 1);
  CHECK(s.allocated == 1024);
  CHECK(s.peak_allocated == 1024);
  a.deallocate(q, 1000);
  CHECK(a.stats().reserved == 1024);
  a.empty_cache();
  CHECK(a.stats().reserved == 0);
  CHECK(CachingHostAllocator::round_size(5000) == 5120);
  CHECK(CachingHostAllocator::round_size(1) == 64);
}

TEST_CASE("storage_bytes: a shape whose byte size passes 2^63 is out of memory, not wrapped", "[tensor][shape]") {
  using ingot::Shape;
  CHECK(ingot::storage_bytes(Shape{784, 10}, 4) == 31360);
  CHECK(ingot::storage_bytes(Shape{}, 8) == 8);
  CHECK(ingot::storage_bytes(Shape{int64_t{1} << 62, 4, 0}, 4) == 0);  // (empty whatever the other dims)
  // model.sizes: [784, 3000000000000000, 10]: 9.4e18 bytes of f32 weight.
  CHECK_THROWS_AS(ingot::storage_bytes(Shape{3000000000000000, 784}, 4), ingot::OutOfMemoryError);
  CHECK_THROWS_WITH(ingot::Tensor::empty(Shape{3000000000000000, 784}, ingot::DType::F32),
                    Catch::Matchers::Contains("[3000000000000000, 784] would need more than 2^63 bytes"));
}
