// The cuda plugin's caching allocator on a GPU, tested directly: reuse, stats, empty_cache, the
// out-of-memory message (asking for more than the device holds) and a block used on a second
// stream. Skipped without a GPU (test_caching_allocator_host.cpp covers the bookkeeping anywhere).
#include <catch2/catch.hpp>

#include <cuda_runtime_api.h>

#include <atomic>
#include <thread>

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

// Holds a stream at a host function until released, so work queued behind it is certainly pending.
class StreamGate {
 public:
  explicit StreamGate(cudaStream_t s) {
    ok_ = cudaLaunchHostFunc(
              s,
              [](void* open) {
                while (!static_cast<std::atomic<bool>*>(open)->load()) std::this_thread::yield();
              },
              &open_) == cudaSuccess;
  }
  ~StreamGate() { open(); }
  StreamGate(const StreamGate&) = delete;
  StreamGate& operator=(const StreamGate&) = delete;
  bool ok() const { return ok_; }
  void open() { open_.store(true); }

 private:
  std::atomic<bool> open_{false};
  bool ok_ = false;
};

TEST_CASE("cuda allocator: a block used on a second stream is reused only after that stream's work",
          "[cuda][allocator]") {
  if (!have_gpu()) return;
  cudaStream_t compute = nullptr, side = nullptr;
  REQUIRE(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking) == cudaSuccess);
  REQUIRE(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking) == cudaSuccess);
  {
    CachingAllocator alloc(0, compute);
    constexpr size_t kBytes = size_t(1) << 20;
    void* p = alloc.allocate(kBytes);
    {
      StreamGate gate(side);  // opened at scope end even if a check below fails
      CHECK(gate.ok());
      CHECK(cudaMemsetAsync(p, 0, kBytes, side) == cudaSuccess);  // queued behind the gate
      alloc.record_stream(p, side);
      alloc.release(p);
      CHECK(alloc.stats().pending_blocks == 1);
      void* q = alloc.allocate(kBytes);  // the memset on `side` may still write `p`
      CHECK(q != p);
      alloc.release(q);
      gate.open();
      CHECK(cudaStreamSynchronize(side) == cudaSuccess);
    }
    void* r = alloc.allocate(kBytes);  // the event completed: `p` (or `q`) is free again
    void* t = alloc.allocate(kBytes);
    CHECK((r == p || t == p));
    CHECK(alloc.stats().pending_blocks == 0);
    alloc.release(r);
    alloc.release(t);
    // Blocks of the side stream serve the side stream only.
    void* s1 = alloc.allocate(kBytes, side, BlockUse::User);
    alloc.release(s1);
    CHECK(alloc.allocate(kBytes, side, BlockUse::User) == s1);
    alloc.release(s1);
    alloc.empty_cache();
    CHECK(alloc.stats().reserved == 0);
  }
  cudaStreamDestroy(side);
  cudaStreamDestroy(compute);
}

}  // namespace
}  // namespace ingot::cuda
