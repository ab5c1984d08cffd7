// The cuda plugin's caching allocator on a fake device (no GPU): size classes and the oversize
// guard, reuse per stream, blocks used on other streams held back until their events complete,
// internal versus user counters, empty_cache, the out-of-memory retry, a failing free.
#include <catch2/catch.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>

#include "caching_allocator.h"
#include "ingot/plugin/sdk.h"

namespace ingot::cuda {
namespace {

constexpr size_t kMiB = size_t(1) << 20;

cudaStream_t stream(uintptr_t id) { return reinterpret_cast<cudaStream_t>(id); }
const cudaStream_t kCompute = stream(0x100), kSide = stream(0x200), kOther = stream(0x300);

// What the fake device did, shared between the test and the allocator that owns the fake.
struct FakeState {
  size_t capacity = 64 * kMiB, used = 0;
  uintptr_t next_address = 0x10000000;
  std::map<void*, size_t> blocks;
  std::set<void*> failing_frees;
  std::map<void*, int> free_calls;
  int mallocs = 0, syncs = 0;
  std::map<cudaEvent_t, cudaStream_t> recorded;  // events not yet completed, and their stream
  uintptr_t next_event = 1;
  int events_created = 0, events_destroyed = 0;

  // The work queued on `s` so far has completed.
  void finish(cudaStream_t s) {
    for (auto it = recorded.begin(); it != recorded.end();) it = it->second == s ? recorded.erase(it) : std::next(it);
  }
};

class FakeDevice final : public RawDeviceOps {
 public:
  explicit FakeDevice(std::shared_ptr<FakeState> s) : s_(std::move(s)) {}
  void* malloc(size_t bytes) override {
    s_->mallocs++;
    if (s_->used + bytes > s_->capacity) return nullptr;
    void* p = reinterpret_cast<void*>(s_->next_address);
    s_->next_address += bytes;
    s_->used += bytes;
    s_->blocks[p] = bytes;
    return p;
  }
  void free(void* ptr) override {
    s_->free_calls[ptr]++;
    if (s_->failing_frees.count(ptr) != 0) throw sdk::Failure(INGOT_ERR_RUNTIME, "fake cudaFree failed");
    REQUIRE(s_->blocks.count(ptr) == 1);
    s_->used -= s_->blocks[ptr];
    s_->blocks.erase(ptr);
  }
  void synchronize() override {
    s_->syncs++;
    s_->recorded.clear();
  }
  cudaEvent_t event_create() override {
    s_->events_created++;
    return reinterpret_cast<cudaEvent_t>(s_->next_event++);
  }
  void event_record(cudaEvent_t e, cudaStream_t st) override { s_->recorded[e] = st; }
  bool event_done(cudaEvent_t e) override { return s_->recorded.count(e) == 0; }
  void event_destroy(cudaEvent_t) noexcept override { s_->events_destroyed++; }
  void memory_info(size_t& free_bytes, size_t& total_bytes) noexcept override {
    free_bytes = s_->capacity - s_->used;
    total_bytes = s_->capacity;
  }

 private:
  std::shared_ptr<FakeState> s_;
};

struct Fixture {
  std::shared_ptr<FakeState> dev = std::make_shared<FakeState>();
  CachingAllocator alloc{0, kCompute, std::make_unique<FakeDevice>(dev)};
};

TEST_CASE("cuda allocator (host): size classes, and sizes near SIZE_MAX refused instead of wrapping",
          "[cuda][allocator]") {
  CHECK(CachingAllocator::round_size(0) == 512);
  CHECK(CachingAllocator::round_size(1) == 512);
  CHECK(CachingAllocator::round_size(513) == 1024);
  CHECK(CachingAllocator::round_size(kMiB - 1) == kMiB);
  CHECK(CachingAllocator::round_size(kMiB + 1) == 2 * kMiB);
  CHECK(CachingAllocator::round_size(5 * kMiB + 3) == 6 * kMiB);
  CHECK(CachingAllocator::round_size(CachingAllocator::kMaxRequest) == CachingAllocator::kMaxRequest);
  for (size_t huge : {CachingAllocator::kMaxRequest + 1, SIZE_MAX, SIZE_MAX - 1024}) {
    try {
      (void)CachingAllocator::round_size(huge);
      FAIL("round_size(" << huge << ") did not throw");
    } catch (const sdk::Failure& e) {
      CHECK(e.code() == INGOT_ERR_OUT_OF_MEMORY);
      CHECK(std::string(e.what()).find("larger than any device") != std::string::npos);
    }
  }
  Fixture f;
  CHECK_THROWS_AS(f.alloc.allocate(SIZE_MAX), sdk::Failure);
  CHECK(f.dev->mallocs == 0);
  CHECK(f.alloc.stats().reserved == 0);
}

TEST_CASE("cuda allocator (host): a block is reused at once by its own stream", "[cuda][allocator]") {
  Fixture f;
  void* a = f.alloc.allocate(1000);
  f.alloc.release(a);
  CHECK(f.alloc.allocate(900) == a);  // same class, same (compute) stream
  AllocatorStats st = f.alloc.stats();
  CHECK(st.cache_hits == 1);
  CHECK(st.allocations == 2);
  CHECK(st.device_mallocs == 1);
  CHECK(st.allocated == 1024);
  f.alloc.release(a);
  // Within a quarter above the request only: a 4 MiB block does not serve 2 MiB.
  void* big = f.alloc.allocate(4 * kMiB);
  f.alloc.release(big);
  CHECK(f.alloc.allocate(2 * kMiB) != big);
  CHECK(f.dev->syncs == 0);
}

TEST_CASE("cuda allocator (host): a block is not reused by another stream", "[cuda][allocator]") {
  Fixture f;
  void* a = f.alloc.allocate(4096, kSide, BlockUse::User);
  f.alloc.release(a);
  void* b = f.alloc.allocate(4096);  // the compute stream: kSide's work on `a` may still be queued
  CHECK(b != a);
  CHECK(f.alloc.allocate(4096, kSide, BlockUse::User) == a);
  CHECK(f.alloc.stats().device_mallocs == 2);
}

TEST_CASE("cuda allocator (host): record_stream holds a block back until the other stream's event completed",
          "[cuda][allocator]") {
  Fixture f;
  void* a = f.alloc.allocate(8192);
  CHECK(f.alloc.record_stream(static_cast<char*>(a) + 100, kSide));  // an interior pointer names its block
  CHECK(f.alloc.record_stream(a, kSide));                            // recorded once
  CHECK(f.alloc.record_stream(a, kCompute));                         // its own stream: nothing to wait for
  f.alloc.release(a);
  CHECK(f.dev->recorded.size() == 1);
  CHECK(f.dev->recorded.begin()->second == kSide);
  CHECK(f.alloc.stats().pending_blocks == 1);
  CHECK(f.alloc.stats().allocated == 0);

  void* b = f.alloc.allocate(8192);  // kSide may still read `a`
  CHECK(b != a);
  f.alloc.release(b);
  f.dev->finish(kSide);
  void* c = f.alloc.allocate(8192);  // the same class now has `b` and `a`; either is safe
  CHECK((c == a || c == b));
  void* d = f.alloc.allocate(8192);
  CHECK((d == a || d == b));
  CHECK(c != d);
  CHECK(f.alloc.stats().pending_blocks == 0);
  CHECK(f.dev->syncs == 0);  // only queries: the allocating thread never waits

  // The event goes back to a pool: the next hold-back creates none.
  f.alloc.record_stream(c, kOther);
  f.alloc.release(c);
  CHECK(f.dev->events_created == 1);

  CHECK_FALSE(f.alloc.record_stream(reinterpret_cast<void*>(0x42), kSide));                 // not from this allocator
  CHECK_FALSE(f.alloc.record_stream(reinterpret_cast<void*>(f.dev->next_address), kSide));  // past the last block
}

TEST_CASE("cuda allocator (host): internal workspaces stay out of the user counters", "[cuda][allocator]") {
  Fixture f;
  void* user = f.alloc.allocate(1000);
  StreamMemory scratch(f.alloc, kSide);
  void* ws = scratch.allocate(3 * kMiB);
  AllocatorStats st = f.alloc.stats();
  CHECK(st.allocated == 1024);
  CHECK(st.allocations == 1);
  CHECK(st.internal_allocated == 4 * kMiB);
  CHECK(st.internal_allocations == 1);
  CHECK(st.reserved == 1024 + 4 * kMiB);
  scratch.release(ws);
  st = f.alloc.stats();
  CHECK(st.internal_allocated == 0);
  CHECK(st.peak_internal_allocated == 4 * kMiB);
  CHECK(st.peak_allocated == 1024);
  CHECK(st.reserved == 1024 + 4 * kMiB);  // cached for kSide
  CHECK(scratch.allocate(3 * kMiB) == ws);
  CHECK(f.alloc.stats().cache_hits == 0);  // internal hits are not user cache hits
  f.alloc.release(user);
}

TEST_CASE("cuda allocator (host): empty_cache waits for the device and frees every unused block", "[cuda][allocator]") {
  Fixture f;
  void* live = f.alloc.allocate(kMiB + 1);
  void* cached = f.alloc.allocate(4096, kSide, BlockUse::Internal);
  void* pending = f.alloc.allocate(8192);
  f.alloc.release(cached);
  f.alloc.record_stream(pending, kOther);
  f.alloc.release(pending);
  REQUIRE(f.alloc.stats().pending_blocks == 1);
  f.alloc.empty_cache();
  const AllocatorStats st = f.alloc.stats();
  CHECK(f.dev->syncs == 1);
  CHECK(st.pending_blocks == 0);
  CHECK(st.reserved == 2 * kMiB);
  CHECK(f.dev->blocks.size() == 1);
  CHECK(f.dev->blocks.count(live) == 1);
  CHECK(f.dev->free_calls[cached] == 1);
  CHECK(f.dev->free_calls[pending] == 1);
  f.alloc.empty_cache();  // nothing cached: no wait
  CHECK(f.dev->syncs == 1);
  f.alloc.release(live);
}

TEST_CASE("cuda allocator (host): out of memory empties the cache, retries once, then explains", "[cuda][allocator]") {
  Fixture f;
  f.dev->capacity = 8 * kMiB;
  f.alloc.release(f.alloc.allocate(4 * kMiB));
  void* a = f.alloc.allocate(6 * kMiB);  // fits only once the cached 4 MiB is returned
  AllocatorStats st = f.alloc.stats();
  CHECK(st.oom_retries == 1);
  CHECK(st.reserved == 6 * kMiB);
  try {
    (void)f.alloc.allocate(6 * kMiB);
    FAIL("allocating past the fake device's capacity succeeded");
  } catch (const sdk::Failure& e) {
    const std::string msg = e.what();
    INFO(msg);
    CHECK(e.code() == INGOT_ERR_OUT_OF_MEMORY);
    CHECK(msg.find("CUDA out of memory on device 0: tried to allocate") != std::string::npos);
    CHECK(msg.find("in workspaces") != std::string::npos);
    CHECK(msg.find("smaller batch") != std::string::npos);
  }
  CHECK(f.alloc.stats().oom_retries == 1);  // nothing cached, so no second retry
  f.alloc.release(a);
}

TEST_CASE("cuda allocator (host): a failing free leaves no freed pointer in the cache", "[cuda][allocator]") {
  Fixture f;
  void* a = f.alloc.allocate(4096);
  void* b = f.alloc.allocate(4096);
  f.alloc.release(a);
  f.alloc.release(b);
  f.dev->failing_frees = {a, b};
  CHECK_THROWS_WITH(f.alloc.empty_cache(), Catch::Contains("fake cudaFree failed"));
  f.dev->failing_frees.clear();
  CHECK(f.dev->free_calls[a] + f.dev->free_calls[b] == 1);  // stopped at the first failure
  void* const failed = f.dev->free_calls[a] == 1 ? a : b;
  void* again[2] = {f.alloc.allocate(4096), f.alloc.allocate(4096)};
  for (void* p : again) CHECK(p != failed);  // never a pointer the device was asked to free
  for (void* p : again) f.alloc.release(p);
  f.alloc.empty_cache();
  CHECK(f.dev->free_calls[failed] == 1);  // and never asked again
  CHECK(f.dev->free_calls[a] + f.dev->free_calls[b] == 2);
}

}  // namespace
}  // namespace ingot::cuda
