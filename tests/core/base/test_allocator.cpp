// CachingHostAllocator's size classes: bounded waste, and a clean out-of-memory error (no endless
// loop, no wrap-around) for requests no machine can serve.
#include <catch2/catch.hpp>

#include <cstdint>

#include "ingot/base/allocator.h"
#include "ingot/base/error.h"

using ingot::CachingHostAllocator;

TEST_CASE("round_size: 64-byte classes to 4 KiB, then eighths of a power of two", "[base][allocator]") {
  CHECK(CachingHostAllocator::round_size(0) == 64);
  CHECK(CachingHostAllocator::round_size(65) == 128);
  CHECK(CachingHostAllocator::round_size(4096) == 4096);
  CHECK(CachingHostAllocator::round_size(4097) == 4096 + 512);
  CHECK(CachingHostAllocator::round_size(size_t{1} << 40) == size_t{1} << 40);
  CHECK(CachingHostAllocator::round_size((size_t{1} << 40) + 1) == (size_t{1} << 40) + (size_t{1} << 37));
  CHECK(CachingHostAllocator::round_size(CachingHostAllocator::kMaxRequest) == CachingHostAllocator::kMaxRequest);
}

TEST_CASE("round_size: requests of 2^63 bytes and more are out of memory, not an endless loop", "[base][allocator]") {
  // (pow2 * 2 used to wrap to 0 for these, and the size-class loop never ended)
  for (const size_t bytes :
       {size_t{1} << 63, (size_t{1} << 63) + 12345, SIZE_MAX, CachingHostAllocator::kMaxRequest + 1}) {
    INFO(bytes);
    CHECK_THROWS_AS(CachingHostAllocator::round_size(bytes), ingot::OutOfMemoryError);
  }
  CachingHostAllocator a;
  CHECK_THROWS_WITH(a.allocate(size_t{1} << 63), Catch::Matchers::Contains("larger than any machine's memory"));
  CHECK(a.stats().reserved == 0);
}
