// Memory statistics against known allocations (the sizes are worked out by hand from the host
// allocator's size classes), and the guarded allocator: one retry after emptying the cache, and
// an out-of-memory error that says what was asked, held and available.
#include <catch2/catch.hpp>

#include "ingot/base/error.h"
#include "ingot/runtime/device_memory.h"
#include "ingot/runtime/guarded_allocator.h"
#include "ingot/runtime/memory_tracker.h"
#include "ingot/runtime/registry.h"
#include "ingot/tensor/tensor.h"

namespace ingot {
namespace {

using Catch::Matchers::Contains;

// Size classes of the requests below, by hand: 4000 B -> 63 x 64 = 4032; 400000 B -> steps of
// 262144 / 8 = 32768, 13 of them = 425984; 20000 B -> steps of 2048, 10 = 20480; 200000 B ->
// steps of 16384, 13 = 212992.
constexpr int64_t k1000 = 4032, k100000 = 425984, k5000 = 20480, k50000 = 212992;

TEST_CASE("memory stats: allocated, reserved and peak move by the rounded sizes", "[runtime][memory]") {
  CHECK(CachingHostAllocator::round_size(4000) == k1000);
  CHECK(CachingHostAllocator::round_size(400000) == k100000);
  CHECK(CachingHostAllocator::round_size(20000) == k5000);
  empty_cache();
  reset_peak_memory_stats();
  const MemoryStats s0 = memory_stats();
  REQUIRE(s0.reserved == s0.allocated);  // nothing cached
  MemoryStats s2;
  {
    const Tensor a = Tensor::empty({1000});
    const MemoryStats s1 = memory_stats();
    CHECK(s1.allocated - s0.allocated == k1000);
    CHECK(s1.reserved - s0.reserved == k1000);
    CHECK(s1.peak_allocated == s1.allocated);
    {
      const Tensor b = Tensor::empty({100000});
      s2 = memory_stats();
      CHECK(s2.allocated - s0.allocated == k1000 + k100000);
      CHECK(s2.reserved - s0.reserved == k1000 + k100000);
      CHECK(s2.peak_allocated == s2.allocated);
    }
    const MemoryStats s3 = memory_stats();
    CHECK(s3.allocated == s1.allocated);       // b freed
    CHECK(s3.reserved == s2.reserved);         // but kept in the cache
    CHECK(s3.peak_allocated == s2.allocated);  // the peak stays
    reset_peak_memory_stats();
    CHECK(memory_stats().peak_allocated == s3.allocated);
    const Tensor c = Tensor::empty({100000});  // b's block again
    CHECK(memory_stats().cache_hits == s3.cache_hits + 1);
    CHECK(memory_stats().reserved == s2.reserved);
    const Tensor d = Tensor::empty({5000});  // a new size class
    const MemoryStats s4 = memory_stats();
    CHECK(s4.allocated - s0.allocated == k1000 + k100000 + k5000);
    CHECK(s4.reserved - s0.reserved == k1000 + k100000 + k5000);
    CHECK(s4.peak_allocated == s4.allocated);
  }
  const MemoryStats s5 = memory_stats();
  CHECK(s5.allocated == s0.allocated);
  CHECK(s5.reserved - s0.reserved == k1000 + k100000 + k5000);
  empty_cache();
  CHECK(memory_stats().reserved == s0.reserved);
}

/// A device whose memory is full until its cache is emptied (or always).
class FakeAllocator final : public Allocator {
 public:
  bool cache_full = true, always_fail = false;
  int allocs = 0, empties = 0;
  MemoryStats s{300, 500, 400, 0, 0};
  void* allocate(size_t) override {
    ++allocs;
    if (always_fail || cache_full) throw OutOfMemoryError("fake: device full");
    return &byte_;
  }
  void deallocate(void*, size_t) override {}
  MemoryStats stats() const override { return s; }
  void reset_peak() override {}
  void empty_cache() override {
    ++empties;
    cache_full = false;
  }

 private:
  char byte_ = 0;
};

TEST_CASE("guarded allocator: empties the cache and retries once", "[runtime][memory]") {
  FakeAllocator fake;
  GuardedAllocator guarded(Device::cpu(), fake);
  CHECK(guarded.allocate(1000) != nullptr);
  CHECK(fake.allocs == 2);
  CHECK(fake.empties == 1);
  CHECK(guarded.allocate(1000) != nullptr);  // no failure: no retry
  CHECK(fake.allocs == 3);
  CHECK(fake.empties == 1);
}

TEST_CASE("guarded allocator: a second failure says what was asked, held and available", "[runtime][memory]") {
  FakeAllocator fake;
  fake.always_fail = true;
  GuardedAllocator guarded(Device::cpu(), fake);
  try {
    guarded.allocate(1 << 20);
    FAIL("no error");
  } catch (const OutOfMemoryError& e) {
    const std::string m = e.what();
    CHECK_THAT(m, Contains("cpu: out of memory: 1.0 MiB (1048576 bytes) requested, still failing after the cache was "
                           "emptied; allocated 300 B, reserved 500 B, peak 400 B; budget "));
    CHECK_THAT(m, Contains("available of"));
    CHECK_THAT(m, Contains("(fake: device full): lower the batch size"));
  }
  CHECK(fake.allocs == 2);  // exactly one retry
  CHECK(fake.empties == 1);
  // A device no backend provides: its budget is unknown, the error still comes.
  GuardedAllocator gpu(Device{DeviceKind::CUDA, 0}, fake);
  if (BackendRegistry::instance().candidates(DeviceKind::CUDA).empty())
    REQUIRE_THROWS_WITH(gpu.allocate(64), Contains("cuda:0: out of memory") && Contains("budget unknown"));
}

TEST_CASE("host allocator limit: a tensor gets memory back from the cache, else a full error", "[runtime][memory]") {
  struct Unlimit {
    ~Unlimit() { host_allocator().set_limit(0); }
  } unlimit;
  empty_cache();
  const MemoryStats s0 = memory_stats();
  { const Tensor a = Tensor::empty({100000}); }
  REQUIRE(memory_stats().reserved == s0.reserved + k100000);  // a's block is cached
  host_allocator().set_limit(s0.reserved + k100000 + 100000);
  // 200000 B does not fit beside the cached block; emptying the cache makes room.
  const Tensor b = Tensor::empty({50000});
  CHECK(memory_stats().reserved == s0.reserved + k50000);
  CHECK(memory_stats().allocated == s0.allocated + k50000);
  // 800000 B does not fit even with the cache empty.
  try {
    (void)Tensor::empty({200000});
    FAIL("no error");
  } catch (const OutOfMemoryError& e) {
    CHECK_THAT(e.what(), Contains("cpu: out of memory: 781.2 KiB (800000 bytes) requested"));
    CHECK_THAT(e.what(), Contains("allocated " + format_memory_bytes(s0.allocated + k50000) + ","));
    CHECK_THAT(e.what(), Contains("would pass the host allocator's limit"));
  }
  CHECK(memory_stats().allocated == s0.allocated + k50000);  // nothing leaked by the failures
}

}  // namespace
}  // namespace ingot
