// MemoryTracker: known allocations give the expected peak and, at that moment, the expected
// largest blocks, named for the op or tensor that made them; nothing is recorded while it is off.
#include <catch2/catch.hpp>

#include "ingot/ops/elementwise.h"
#include "ingot/runtime/memory_tracker.h"
#include "ingot/tensor/tensor.h"

namespace ingot {
namespace {

// Host size classes by hand: 4000 B -> 4032, 400000 B -> 425984, 20000 B -> 20480.
constexpr int64_t k1000 = 4032, k100000 = 425984, k5000 = 20480;

struct Tracking {
  explicit Tracking(size_t top_n) { MemoryTracker::instance().start(top_n); }
  ~Tracking() { MemoryTracker::instance().stop(); }
};

TEST_CASE("memory tracker: the peak and the largest tensors live at it", "[runtime][memory]") {
  const Tensor before = Tensor::empty({5000});  // allocated before tracking: not counted, its free ignored
  Tracking tracking(2);
  MemoryTracker& t = MemoryTracker::instance();
  const Tensor a = Tensor::empty({1000});
  Tensor b = Tensor::empty({100000});
  b.fill_(1.0);
  {
    const Tensor c = b + b;  // an op's output
    CHECK(t.live_bytes(Device::cpu()) == k1000 + 2 * k100000);
  }
  const Tensor d = Tensor::empty({5000});
  CHECK(t.live_bytes(Device::cpu()) == k1000 + k100000 + k5000);
  const TrackedPeak p = t.window_peak(Device::cpu());
  CHECK(p.bytes == k1000 + 2 * k100000);
  CHECK(p.blocks == 3);
  REQUIRE(p.top.size() == 2);
  CHECK(p.top[0].str() == "tensor [100000] float32 416.0 KiB");  // b: as large as c, and older
  CHECK(p.top[1].str() == "add output [100000] float32 416.0 KiB");
  CHECK(p.top[1].op != nullptr);

  // A new window starts at what is live now; a larger peak replaces the blocks listed.
  t.begin_window();
  CHECK(t.window_peak(Device::cpu()).bytes == k1000 + k100000 + k5000);
  b = Tensor();
  CHECK(t.window_peak(Device::cpu()).bytes == k1000 + k100000 + k5000);
  const Tensor e = Tensor::empty({100000}, DType::I32);
  const Tensor f = Tensor::empty({100000}, DType::I32);
  const TrackedPeak q = t.window_peak(Device::cpu());
  CHECK(q.bytes == k1000 + 2 * k100000 + k5000);
  CHECK(q.blocks == 4);
  REQUIRE(q.top.size() == 2);
  CHECK(q.top[0].str() == "tensor [100000] int32 416.0 KiB");
  CHECK(q.top[0].serial < q.top[1].serial);
  CHECK(t.devices().size() == 1);
}

TEST_CASE("memory tracker: a label names the op, and tracking off records nothing", "[runtime][memory]") {
  {
    Tracking tracking(10);
    const Shape shape{8, 16};
    const AllocationLabel outer("conv2d", "workspace", nullptr, DType::F32);
    const Tensor inner = Tensor::empty(shape);  // made during the op: the op's workspace, with its shape
    const TrackedPeak p = MemoryTracker::instance().window_peak(Device::cpu());
    REQUIRE(p.top.size() == 1);
    CHECK(p.top[0].str() == "conv2d workspace [8, 16] float32 512 B");
  }
  CHECK_FALSE(MemoryTracker::enabled());
  const Tensor x = Tensor::empty({1000});
  CHECK(MemoryTracker::instance().devices().empty());
  CHECK(MemoryTracker::instance().live_bytes(Device::cpu()) == 0);
  CHECK(AllocationLabel::current() == nullptr);
}

}  // namespace
}  // namespace ingot
