// For the GPU tests: bitwise equality of two tensors of one dtype, wherever they live (compare()
// treats -0 and +0 alike; a kernel that claims the reference's bits must match them exactly).
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>

#include "ingot/tensor/tensor.h"

namespace ingot::test {

inline void require_same_bits(const Tensor& a, const Tensor& b) {
  REQUIRE(a.shape() == b.shape());
  REQUIRE(a.dtype() == b.dtype());
  const Tensor x = a.to(Device::cpu()).contiguous(), y = b.to(Device::cpu()).contiguous();
  const int64_t size = dtype_size(x.dtype());
  const char* px = static_cast<const char*>(x.storage()->data()) + x.offset() * size;
  const char* py = static_cast<const char*>(y.storage()->data()) + y.offset() * size;
  REQUIRE(std::memcmp(px, py, static_cast<size_t>(x.numel() * size)) == 0);
}

}  // namespace ingot::test
