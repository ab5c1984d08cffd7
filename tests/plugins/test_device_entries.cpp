// The device table through core's API (device_memory, device_event, pinned_memory, allocators per
// device) on a fake device plugin serving two devices whose effects are visible, and a table cut
// after `copy` that must load and answer "does not support" in one line (its tail is garbage:
// reading it would crash).
#include <dlfcn.h>

#include <catch2/catch.hpp>
#include <string>

#include "ingot/ops/ops.h"
#include "ingot/runtime/backend.h"
#include "ingot/runtime/device_event.h"
#include "ingot/runtime/device_memory.h"
#include "ingot/runtime/pinned_memory.h"
#include "ingot/runtime/plugin_loader.h"
#include "ingot/runtime/registry.h"
#include "test_support.h"

namespace ingot {
namespace {

const Device kDev{DeviceKind::CUDA, 0};
const Device kDev1{DeviceKind::CUDA, 1};

const std::string kFixture = std::string(INGOT_DEVICE_FIXTURE_DIR) + "/libfixture_device.so";
const std::string kFixtureShort = std::string(INGOT_DEVICE_FIXTURE_DIR) + "/libfixture_device_short.so";

void load_fixtures() { PluginLoader::instance().load_folder(INGOT_DEVICE_FIXTURE_DIR); }

struct Counters {
  int syncs = 0, async_copies = 0, live_events = 0, live_pinned = 0;
};

// Reads the fake plugin's counters (RTLD_NOLOAD: the loader's copy, never a new one).
Counters counters() {
  void* h = dlopen(kFixture.c_str(), RTLD_NOW | RTLD_NOLOAD);
  REQUIRE(h != nullptr);
  auto* fn = reinterpret_cast<void (*)(int*, int*, int*, int*)>(dlsym(h, "fixture_device_counters"));
  REQUIRE(fn != nullptr);
  Counters c;
  fn(&c.syncs, &c.async_copies, &c.live_events, &c.live_pinned);
  dlclose(h);
  return c;
}

void* fixture_stream(int index) {
  void* h = dlopen(kFixture.c_str(), RTLD_NOW | RTLD_NOLOAD);
  REQUIRE(h != nullptr);
  auto* fn = reinterpret_cast<void* (*)(int)>(dlsym(h, "fixture_device_stream"));
  REQUIRE(fn != nullptr);
  void* s = fn(index);
  dlclose(h);
  return s;
}

// Enables only the short-table backend for a test's duration.
struct OnlyShort {
  OnlyShort() { BackendRegistry::instance().restrict_to({"fake_device_short"}); }
  ~OnlyShort() { BackendRegistry::instance().restrict_to({}); }
};

TEST_CASE("device entries: both fake plugins load", "[plugins][device]") {
  load_fixtures();
  for (const auto& [path, backend] :
       {std::pair{kFixture, "fake_device"}, std::pair{kFixtureShort, "fake_device_short"}}) {
    const PluginRecord rec = PluginLoader::instance().load_file(path);
    INFO(path << ": " << rec.reason);
    REQUIRE(rec.available);
    CHECK(rec.backends == std::vector<std::string>{backend});
  }
  CHECK(device_backend(kDev).name() == "fake_device");  // priority 20 over 10
  CHECK(device_backend(kDev).device_count() == 2);
  CHECK(device_backend(kDev1).name() == "fake_device");
}

TEST_CASE("device entries: memory_stats, reset_peak and empty_cache reach the plugin", "[plugins][device]") {
  load_fixtures();
  const MemoryStats s0 = memory_stats(kDev);
  {
    const Tensor t = Tensor::empty({256}, DType::F32, kDev);
    const MemoryStats s1 = memory_stats(kDev);
    CHECK(s1.allocated == s0.allocated + 1024);
    CHECK(s1.allocations == s0.allocations + 1);
    CHECK(s1.peak_allocated >= s1.allocated);
  }
  const MemoryStats s2 = memory_stats(kDev);
  CHECK(s2.allocated == s0.allocated);
  CHECK(s2.reserved >= s2.allocated + 1024);  // the freed block is cached
  { const Tensor again = Tensor::empty({256}, DType::F32, kDev); }
  CHECK(memory_stats(kDev).cache_hits == s2.cache_hits + 1);
  empty_cache(kDev);
  CHECK(memory_stats(kDev).reserved == memory_stats(kDev).allocated);
  reset_peak_memory_stats(kDev);
  CHECK(memory_stats(kDev).peak_allocated == memory_stats(kDev).allocated);
}

TEST_CASE("device entries: each device has its own allocator, and an index out of range is one clear error",
          "[plugins][device]") {
  load_fixtures();
  const MemoryStats a0 = memory_stats(kDev), b0 = memory_stats(kDev1);
  {
    const Tensor t0 = Tensor::empty({64}, DType::F32, kDev);
    const Tensor t1 = Tensor::empty({32}, DType::F32, kDev1);
    CHECK(t1.device() == kDev1);
    CHECK(memory_stats(kDev).allocated == a0.allocated + 256);
    CHECK(memory_stats(kDev1).allocated == b0.allocated + 128);
    CHECK(&BackendRegistry::instance().allocator(kDev) != &BackendRegistry::instance().allocator(kDev1));
    // Data moves host -> cuda:1 -> host through device 1.
    const Tensor x = test::random_tensor({8}, DType::F32, 3);
    INGOT_REQUIRE_CLOSE(x.to(kDev1).to(Device::cpu()), x, 0.0, 0.0);
  }
  CHECK(memory_stats(kDev).allocated == a0.allocated);
  CHECK(memory_stats(kDev1).allocated == b0.allocated);
  CHECK(native_stream(kDev1) == fixture_stream(1));
  CHECK(native_stream(kDev) != native_stream(kDev1));

  const Device gone{DeviceKind::CUDA, 2};
  const std::string expected =
      "cuda:2: no such device: backend fake_device (plugin fixture_device) serves 2 devices "
      "(cuda:0 .. cuda:1); use an index below 2";
  REQUIRE_THROWS_WITH(Tensor::empty({4}, DType::F32, gone), expected);
  REQUIRE_THROWS_WITH(memory_stats(gone), expected);
  REQUIRE_THROWS_WITH([&] { Event e(gone); }(), Catch::Contains(expected));
  REQUIRE_THROWS_WITH(test::random_tensor({2}, DType::F32, 1).to(gone), expected);
  REQUIRE_THROWS_WITH(Tensor::empty({4}, DType::F32, Device{DeviceKind::CUDA, -1}),
                      Catch::StartsWith("cuda:-1: no such device"));
}

TEST_CASE("device fallback: an op no device backend runs goes to the host, gradients included", "[plugins][device]") {
  load_fixtures();  // the fake devices run no op at all
  const Tensor x = test::random_tensor({4, 5}, DType::F32, 9);
  const Tensor y = test::random_tensor({4, 5}, DType::F32, 10);
  const Tensor xd = x.to(kDev), yd = y.to(kDev);
  const Tensor z = add(mul(xd, yd), 1.0);
  CHECK(z.device() == kDev);
  INGOT_REQUIRE_CLOSE(z.to(Device::cpu()), add(mul(x, y), 1.0), 1e-6, 1e-6);

  Tensor w = xd.detach();  // a leaf on the device
  w.set_requires_grad(true);
  sum(mul(w, w)).backward();
  REQUIRE(w.grad().defined());
  CHECK(w.grad().device() == kDev);
  INGOT_REQUIRE_CLOSE(w.grad().to(Device::cpu()), mul(x, 2.0), 1e-6, 1e-6);

  // A strided view reaches the host without a device COPY (which no backend here runs).
  INGOT_REQUIRE_CLOSE(add(xd.transpose(0, 1), 1.0).to(Device::cpu()), add(x.transpose(0, 1), 1.0), 0.0, 0.0);
}

TEST_CASE("device entries: synchronize, native_stream, pinned memory and async copies", "[plugins][device]") {
  load_fixtures();
  CHECK(native_stream(kDev) == fixture_stream(0));
  const Counters c0 = counters();
  synchronize(kDev);
  CHECK(counters().syncs == c0.syncs + 1);

  REQUIRE(pinned_memory_available(kDev));
  const Tensor x = test::random_tensor({3, 7}, DType::F32, 5);
  CHECK_FALSE(is_pinned(x));
  {
    const Tensor p = pin_memory(x, kDev);
    CHECK(is_pinned(p));
    CHECK(p.device().is_cpu());
    CHECK(counters().live_pinned == c0.live_pinned + 1);
    INGOT_REQUIRE_CLOSE(p, x, 0.0, 0.0);
    const Tensor d = to_async(p, kDev);
    CHECK(d.device() == kDev);
    CHECK(counters().async_copies == c0.async_copies + 1);
    synchronize(kDev);
    INGOT_REQUIRE_CLOSE(to_async(d, Device::cpu()), x, 0.0, 0.0);
    CHECK(counters().async_copies == c0.async_copies + 2);
  }
  CHECK(counters().live_pinned == c0.live_pinned);  // freed through host_free_pinned
  Tensor g = x.clone();
  g.set_requires_grad(true);
  REQUIRE_THROWS_WITH(to_async(g, kDev), Catch::Contains("requires grad"));
}

TEST_CASE("device entries: events record, wait and time through the plugin", "[plugins][device]") {
  load_fixtures();
  const int live = counters().live_events;
  {
    Event start(kDev), end(kDev);
    CHECK(counters().live_events == live + 2);
    REQUIRE_THROWS_WITH(start.elapsed_ms(end), Catch::Contains("record both events"));
    REQUIRE_THROWS_WITH(start.synchronize(), Catch::Contains("before record"));
    start.record();
    end.record();
    start.synchronize();
    CHECK(start.elapsed_ms(end) == Approx(2.5));  // the fake clock advances 2.5 ms per record
    Event moved = std::move(start);
    CHECK(moved.recorded());
    CHECK_FALSE(start.recorded());
    CHECK(moved.elapsed_ms(end) == Approx(2.5));
    REQUIRE_THROWS_WITH(moved.elapsed_ms(Event(Device::cpu())), Catch::Contains("record both events"));
  }
  CHECK(counters().live_events == live);
}

TEST_CASE("device entries: a table cut after copy loads and reports each entry as not supported", "[plugins][device]") {
  load_fixtures();
  const OnlyShort only;
  const Backend& b = device_backend(kDev);
  REQUIRE(b.name() == "fake_device_short");
  CHECK(b.device_table()->struct_size < sizeof(ingot_device_table));
  CHECK(b.device_count() == 1);
  // Each message: one line naming the device, the backend, its plugin and ABI, and the entry.
  const auto check_unsupported = [](const std::string& what, const auto& call) {
    std::string msg;
    try {
      call();
    } catch (const Error& e) {
      msg = e.what();
    }
    INFO(what << ": " << msg);
    CHECK_THAT(msg, Catch::StartsWith("cuda:0: ") && Catch::Contains("does not support " + what) &&
                        Catch::Contains("backend fake_device_short (plugin fixture_device_short, ABI " +
                                       std::to_string(INGOT_ABI_MAJOR) + "." + std::to_string(INGOT_ABI_MINOR) + ")"));
    CHECK(msg.find('\n') == std::string::npos);
  };
  check_unsupported("memory_stats", [] { memory_stats(kDev); });
  check_unsupported("reset_peak_memory_stats", [] { reset_peak_memory_stats(kDev); });
  check_unsupported("empty_cache", [] { empty_cache(kDev); });
  check_unsupported("synchronize", [] { synchronize(kDev); });
  check_unsupported("native_stream", [] { native_stream(kDev); });
  check_unsupported("events", [] { Event e(kDev); });
  check_unsupported("pinned host memory", [] { empty_pinned({4}, DType::F32, kDev); });
  CHECK_FALSE(pinned_memory_available(kDev));
  // No copy_async: to_async falls back to the synchronous copy.
  const Tensor x = test::random_tensor({5}, DType::F32, 9);
  INGOT_REQUIRE_CLOSE(to_async(x, kDev).to(Device::cpu()), x, 0.0, 0.0);
}

}  // namespace
}  // namespace ingot
