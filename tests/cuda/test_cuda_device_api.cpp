// The cuda plugin's device table through core's API: one device per visible GPU, memory_stats /
// empty_cache / peak reset, the out-of-memory message, synchronize, the native stream, pinned
// memory with asynchronous copies, and event timing. Skipped without a GPU.
#include <catch2/catch.hpp>

#include <cuda_runtime_api.h>

#include <iostream>

#include "cuda_plugin_path.h"
#include "ingot/ops/ops.h"
#include "ingot/runtime/backend.h"
#include "ingot/runtime/device_event.h"
#include "ingot/runtime/device_memory.h"
#include "ingot/runtime/device_stream.h"
#include "ingot/runtime/pinned_memory.h"
#include "test_support.h"

namespace ingot {
namespace {

const Device kGpu{DeviceKind::CUDA, 0};

using test::gpu_ready;

TEST_CASE("cuda device API: memory_stats, empty_cache and peak reset through the ABI", "[cuda][memory]") {
  if (!gpu_ready()) return;
  REQUIRE(device_backend(kGpu).name() == "cuda");
  const MemoryStats s0 = memory_stats(kGpu);
  {
    const Tensor t = Tensor::empty({1000}, DType::F32, kGpu);  // 4000 bytes -> the 4096-byte class
    const MemoryStats s1 = memory_stats(kGpu);
    CHECK(s1.allocated == s0.allocated + 4096);
    CHECK(s1.allocations == s0.allocations + 1);
    CHECK(s1.peak_allocated >= s1.allocated);
  }
  const MemoryStats s2 = memory_stats(kGpu);
  CHECK(s2.allocated == s0.allocated);
  CHECK(s2.reserved >= s2.allocated + 4096);
  { const Tensor again = Tensor::empty({1000}, DType::F32, kGpu); }
  CHECK(memory_stats(kGpu).cache_hits == s2.cache_hits + 1);
  empty_cache(kGpu);
  CHECK(memory_stats(kGpu).reserved == memory_stats(kGpu).allocated);
  reset_peak_memory_stats(kGpu);
  CHECK(memory_stats(kGpu).peak_allocated == memory_stats(kGpu).allocated);
  const int n = device_backend(kGpu).device_count();
  REQUIRE_THROWS_WITH(memory_stats(Device{DeviceKind::CUDA, n}),
                      Catch::StartsWith("cuda:" + std::to_string(n) + ": no such device: backend cuda"));
}

TEST_CASE("cuda device API: the backend serves every visible GPU, each with its own allocator and stream",
          "[cuda][devices]") {
  if (!gpu_ready()) return;
  int visible = 0;
  REQUIRE(cudaGetDeviceCount(&visible) == cudaSuccess);
  const Backend& b = device_backend(kGpu);
  REQUIRE(b.device_count() == visible);
  const Tensor x = test::random_tensor({64, 33}, DType::F32, 11);
  const Tensor y = test::random_tensor({64, 33}, DType::F32, 12);
  for (int i = 0; i < visible; ++i) {
    INFO("cuda:" << i);
    const Device dev{DeviceKind::CUDA, i};
    const MemoryStats before = memory_stats(dev);
    const Tensor z = add(x.to(dev), y.to(dev));
    CHECK(z.device() == dev);
    CHECK(memory_stats(dev).allocated > before.allocated);
    INGOT_REQUIRE_CLOSE(z.to(Device::cpu()), add(x, y), 1e-6, 1e-6);
    CHECK(native_stream(dev) != nullptr);
    if (i > 0) CHECK(native_stream(dev) != native_stream(kGpu));
  }
}

TEST_CASE("cuda device API: out of memory frees the cache, retries, then explains", "[cuda][memory]") {
  if (!gpu_ready()) return;
  size_t free_b = 0, total_b = 0;
  REQUIRE(cudaMemGetInfo(&free_b, &total_b) == cudaSuccess);
  { const Tensor cached = Tensor::empty({2 << 20}, DType::F32, kGpu); }  // 8 MiB left in the cache
  REQUIRE(memory_stats(kGpu).reserved > memory_stats(kGpu).allocated);
  std::string msg;
  try {
    const Tensor huge = Tensor::empty({static_cast<int64_t>(total_b / 2)}, DType::F32, kGpu);  // 2x the device
    FAIL("allocating twice the device's memory succeeded");
  } catch (const OutOfMemoryError& e) {
    msg = e.what();
  }
  INFO(msg);
  for (const char* part : {"tried to allocate", "allocated", "reserved", "smaller batch", "mixed precision",
                           "checkpointing"})
    CHECK(msg.find(part) != std::string::npos);
  CHECK(msg.find('\n') == std::string::npos);
  CHECK(memory_stats(kGpu).reserved == memory_stats(kGpu).allocated);  // the cache was emptied for the retry
  const Tensor ok = Tensor::empty({1 << 20}, DType::F32, kGpu);         // still usable
  CHECK(ok.device() == kGpu);
}

TEST_CASE("cuda device API: synchronize and the native compute stream", "[cuda][stream]") {
  if (!gpu_ready()) return;
  void* s = native_stream(kGpu);
  REQUIRE(s != nullptr);
  CHECK(native_stream(kGpu) == s);
  const Tensor a = test::random_tensor({256, 256}, DType::F32, 1).to(kGpu);
  const Tensor b = matmul(a, a);
  synchronize(kGpu);
  CHECK(cudaStreamQuery(static_cast<cudaStream_t>(s)) == cudaSuccess);  // drained
  CHECK(b.device() == kGpu);
}

TEST_CASE("cuda device API: pinned memory and asynchronous copies", "[cuda][pinned]") {
  if (!gpu_ready()) return;
  REQUIRE(pinned_memory_available(kGpu));
  const Tensor x = test::random_tensor({64, 1000}, DType::F32, 3);
  const Tensor p = pin_memory(x, kGpu);
  CHECK(is_pinned(p));
  cudaPointerAttributes attr{};
  REQUIRE(cudaPointerGetAttributes(&attr, p.storage()->data()) == cudaSuccess);
  CHECK(attr.type == cudaMemoryTypeHost);
  const Tensor d = to_async(p, kGpu);
  const Tensor doubled = add(d, d);  // ordered after the copy on the compute stream
  const Tensor back = to_async(doubled, Device::cpu());  // not to be read before synchronize
  synchronize(kGpu);
  INGOT_REQUIRE_CLOSE(back, add(x, x), 0.0, 0.0);
}

TEST_CASE("cuda device API: a copy on a side stream, ordered by an event before compute uses it", "[cuda][stream]") {
  if (!gpu_ready()) return;
  REQUIRE(Stream::available(kGpu));
  const Tensor x = test::random_tensor({256, 1000}, DType::F32, 4);
  const Tensor p = pin_memory(x, kGpu);
  Stream side(kGpu);
  CHECK(side.handle() != native_stream(kGpu));
  const Tensor d = to_async(p, kGpu, &side);
  Event copied(kGpu);
  copied.record(&side);
  copied.wait();  // the compute stream waits for the copy, the host does not
  const Tensor doubled = add(d, d);
  INGOT_REQUIRE_CLOSE(doubled.to(Device::cpu()), add(x, x), 0.0, 0.0);
}

TEST_CASE("cuda device API: events time work on the compute stream", "[cuda][event]") {
  if (!gpu_ready()) return;
  const Tensor a = test::random_tensor({512, 512}, DType::F32, 2).to(kGpu);
  Event start(kGpu), end(kGpu);
  start.record();
  Tensor c = a;
  for (int i = 0; i < 10; ++i) c = matmul(c, a);
  end.record();
  end.synchronize();
  const double ms = start.elapsed_ms(end);
  CHECK(ms > 0.0);
  CHECK(ms < 10000.0);
  std::cout << "10 matmuls 512^3 f32: " << ms << " ms (cuda events)\n";
}

}  // namespace
}  // namespace ingot
