// The device memory / event / pinned memory API on the CPU (core's host allocator, the host
// clock), and its one-line errors for an accelerator no backend provides.
#include <catch2/catch.hpp>

#include <chrono>
#include <functional>
#include <thread>

#include "ingot/runtime/device_event.h"
#include "ingot/runtime/device_memory.h"
#include "ingot/runtime/pinned_memory.h"
#include "ingot/runtime/registry.h"
#include "test_support.h"

namespace ingot {
namespace {

TEST_CASE("memory_stats(cpu) follows core's caching host allocator", "[runtime][memory]") {
  empty_cache();
  const MemoryStats s0 = memory_stats(Device::cpu());
  const size_t block = CachingHostAllocator::round_size(4000 * 4);
  {
    const Tensor t = Tensor::empty({4000}, DType::F32);
    const MemoryStats s1 = memory_stats();
    CHECK(s1.allocated == s0.allocated + static_cast<int64_t>(block));
    CHECK(s1.allocations == s0.allocations + 1);
    CHECK(s1.peak_allocated >= s1.allocated);
    reset_peak_memory_stats();
    CHECK(memory_stats().peak_allocated == s1.allocated);
  }
  const MemoryStats s2 = memory_stats();
  CHECK(s2.allocated == s0.allocated);
  CHECK(s2.reserved >= s2.allocated + static_cast<int64_t>(block));  // the block stays cached
  { const Tensor again = Tensor::empty({4000}, DType::F32); }
  CHECK(memory_stats().cache_hits == s2.cache_hits + 1);
  empty_cache(Device::cpu());
  CHECK(memory_stats().reserved == memory_stats().allocated);
}

TEST_CASE("synchronize and native_stream on the CPU", "[runtime][memory]") {
  REQUIRE_NOTHROW(synchronize(Device::cpu()));
  CHECK(native_stream(Device::cpu()) == nullptr);
}

TEST_CASE("Event on the CPU times with the host clock", "[runtime][event]") {
  Event start, end;
  REQUIRE_THROWS_WITH(start.elapsed_ms(end), Catch::Contains("record both events"));
  start.record();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  end.record();
  end.synchronize();
  const double ms = start.elapsed_ms(end);
  CHECK(ms >= 19.0);
  CHECK(ms < 5000.0);
  CHECK(end.elapsed_ms(start) < 0.0);
}

TEST_CASE("device API on an accelerator no backend provides: one clear line", "[runtime][memory]") {
  const Device gpu{DeviceKind::CUDA, 0};
  if (!BackendRegistry::instance().candidates(DeviceKind::CUDA).empty()) {
    test::skip("a cuda backend is registered in this process");
    return;
  }
  for (const auto& call : std::vector<std::function<void()>>{
           [&] { memory_stats(gpu); }, [&] { empty_cache(gpu); }, [&] { reset_peak_memory_stats(gpu); },
           [&] { synchronize(gpu); }, [&] { native_stream(gpu); }, [&] { Event e(gpu); },
           [&] { empty_pinned({2}, DType::F32, gpu); }}) {
    REQUIRE_THROWS_AS(call(), BackendMissingError);
    REQUIRE_THROWS_WITH(call(), Catch::StartsWith("cuda:0: no backend provides this device"));
  }
  CHECK_FALSE(pinned_memory_available(gpu));
  CHECK_FALSE(pinned_memory_available(Device::cpu()));
  REQUIRE_THROWS_WITH(pin_memory(Tensor::empty({2}), Device::cpu()), Catch::Contains("belongs to an accelerator"));
  const Tensor x = test::random_tensor({3}, DType::F32, 1);
  CHECK(to_async(x, Device::cpu()).storage() == x.storage());  // same device: no copy
}

}  // namespace
}  // namespace ingot
