// The cuda plugin's caching allocator on a GPU, tested directly: reuse, stats, empty_cache and the
// out-of-memory message (asking for more than the device holds). Skipped without a GPU.
#include <catch2/catch.hpp>

#include <cuda_runtime_api.h>

#include "caching_allocator.h"
#include "ingot/plugin/sdk.h"
#include "test_support.h"

namespace ingot::cuda {
namespace {

bool have_gpu() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    (void)cudaGetLastError();
    test::skip("no CUDA device: allocator tests need a GPU");
    return false;
  }
  return true;
}

TEST_CASE("cuda allocator: reuse, stats and empty_cache", "[cuda][allocator]") {
  if (!have_gpu()) return;
  cudaStream_t s = nullptr;
  REQUIRE(cudaStreamCreate(&s) == cudaSuccess);
  {
    CachingAllocator alloc(0, s);
    void* a = alloc.allocate(1000);
    void* b = alloc.allocate(3 << 20);
    AllocatorStats st = alloc.stats();
    CHECK(st.allocated == 1024 + (4 << 20));
    CHECK(st.reserved == st.allocated);
    CHECK(st.device_mallocs == 2);
    alloc.release(a);
    CHECK(alloc.allocate(900) == a);  // same size class: served from the cache
    st = alloc.stats();
    CHECK(st.cache_hits == 1);
    CHECK(st.allocations == 3);
    alloc.release(a);
    alloc.release(b);
    st = alloc.stats();
    CHECK(st.allocated == 0);
    CHECK(st.reserved == 1024 + (4 << 20));
    CHECK(st.peak_allocated == 1024 + (4 << 20));
    alloc.empty_cache();
    CHECK(alloc.stats().reserved == 0);
  }
  cudaStreamDestroy(s);
}

TEST_CASE("cuda allocator: out of memory empties the cache, retries, then explains", "[cuda][allocator]") {
  if (!have_gpu()) return;
  size_t free_b = 0, total_b = 0;
  REQUIRE(cudaMemGetInfo(&free_b, &total_b) == cudaSuccess);
  cudaStream_t s = nullptr;
  REQUIRE(cudaStreamCreate(&s) == cudaSuccess);
  {
    CachingAllocator alloc(0, s);
    alloc.release(alloc.allocate(8 << 20));  // something cached to free on the retry
    try {
      alloc.allocate(total_b * 2);
      FAIL("allocating twice the device's memory succeeded");
    } catch (const sdk::Failure& e) {
      const std::string msg = e.what();
      INFO(msg);
      CHECK(e.code() == INGOT_ERR_OUT_OF_MEMORY);
      CHECK(msg.find("tried to allocate") != std::string::npos);
      CHECK(msg.find("allocated") != std::string::npos);
      CHECK(msg.find("reserved") != std::string::npos);
      CHECK(msg.find("smaller batch") != std::string::npos);
    }
    const AllocatorStats st = alloc.stats();
    CHECK(st.oom_retries == 1);
    CHECK(st.reserved == 0);  // the cache was emptied for the retry
    void* p = alloc.allocate(1 << 20);  // still usable afterwards
    CHECK(p != nullptr);
    alloc.release(p);
  }
  cudaStreamDestroy(s);
}

}  // namespace
}  // namespace ingot::cuda
