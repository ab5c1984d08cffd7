// MemoryTracker: live blocks by address, per-device live bytes and window peaks, and the copy of
// the largest blocks taken lazily: a new peak marks the device, and the first free after it (or a
// read of the peak) copies the blocks, which are then exactly those live at the peak.
#include "ingot/runtime/memory_tracker.h"

#include <fmt/format.h>

#include <algorithm>
#include <mutex>
#include <unordered_map>
#include <utility>

namespace ingot {
namespace {

thread_local const AllocationLabel* t_label = nullptr;

}  // namespace

std::atomic<bool> MemoryTracker::enabled_{false};

struct MemoryTracker::State {
  struct PerDevice {
    Device device;
    int64_t live = 0, live_blocks = 0;
    TrackedPeak peak;
    bool stale = false;  // a new peak was reached and its blocks are not copied yet
  };
  std::mutex mu;
  size_t top_n = 10;
  uint64_t serial = 0;
  std::unordered_map<const void*, TrackedBlock> blocks;
  std::vector<PerDevice> devices;

  PerDevice& of(Device d) {
    for (PerDevice& p : devices)
      if (p.device == d) return p;
    devices.push_back(PerDevice{d});
    return devices.back();
  }

  /// Copies the `top_n` largest live blocks of `p`'s device into its peak (O(live blocks)).
  void copy_top(PerDevice& p) {
    std::vector<const TrackedBlock*> live;
    live.reserve(static_cast<size_t>(p.live_blocks));
    for (const auto& [ptr, b] : blocks)
      if (b.device == p.device) live.push_back(&b);
    const auto larger = [](const TrackedBlock* a, const TrackedBlock* b) {
      return a->bytes != b->bytes ? a->bytes > b->bytes : a->serial < b->serial;
    };
    const size_t n = std::min(top_n, live.size());
    std::partial_sort(live.begin(), live.begin() + static_cast<std::ptrdiff_t>(n), live.end(), larger);
    p.peak.top.clear();
    for (size_t i = 0; i < n; ++i) p.peak.top.push_back(*live[i]);
    p.stale = false;
  }
};

MemoryTracker::MemoryTracker() : state_(std::make_unique<State>()) {}
MemoryTracker::~MemoryTracker() = default;

MemoryTracker& MemoryTracker::instance() {
  static auto* tracker = new MemoryTracker();
  return *tracker;
}

void MemoryTracker::start(size_t top_n) {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->blocks.clear();
  state_->devices.clear();
  state_->top_n = top_n;
  enabled_.store(true, std::memory_order_relaxed);
}

void MemoryTracker::stop() {
  enabled_.store(false, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->blocks.clear();
  state_->devices.clear();
}

void MemoryTracker::on_alloc(Device device, const void* ptr, int64_t bytes) {
  TrackedBlock b;
  b.device = device;
  b.bytes = bytes;
  if (const AllocationLabel* l = t_label) {
    b.op = l->op();
    b.role = l->role();
    if (l->shape() != nullptr) {
      b.has_shape = true;
      b.shape = *l->shape();
      b.dtype = l->dtype();
    }
  }
  std::lock_guard<std::mutex> lock(state_->mu);
  if (!enabled()) return;  // stopped meanwhile
  b.serial = ++state_->serial;
  if (const auto old = state_->blocks.find(ptr); old != state_->blocks.end()) {  // its free was not seen
    State::PerDevice& o = state_->of(old->second.device);
    o.live -= old->second.bytes;
    --o.live_blocks;
  }
  state_->blocks[ptr] = b;
  State::PerDevice& p = state_->of(device);
  p.live += bytes;
  ++p.live_blocks;
  if (p.live > p.peak.bytes) {
    p.peak.bytes = p.live;
    p.peak.blocks = p.live_blocks;
    p.stale = true;
  }
}

void MemoryTracker::on_free(const void* ptr) {
  std::lock_guard<std::mutex> lock(state_->mu);
  const auto it = state_->blocks.find(ptr);
  if (it == state_->blocks.end()) return;  // allocated before tracking started
  State::PerDevice& p = state_->of(it->second.device);
  if (p.stale) state_->copy_top(p);  // the live set is still the peak's
  p.live -= it->second.bytes;
  --p.live_blocks;
  state_->blocks.erase(it);
}

int64_t MemoryTracker::live_bytes(Device device) const {
  std::lock_guard<std::mutex> lock(state_->mu);
  for (const auto& p : state_->devices)
    if (p.device == device) return p.live;
  return 0;
}

void MemoryTracker::begin_window() {
  std::lock_guard<std::mutex> lock(state_->mu);
  for (auto& p : state_->devices) {
    p.peak = TrackedPeak{p.live, p.live_blocks, {}};
    p.stale = true;  // the window's peak so far is now: copied when read or at the next free
  }
}

TrackedPeak MemoryTracker::window_peak(Device device) {
  std::lock_guard<std::mutex> lock(state_->mu);
  for (auto& p : state_->devices) {
    if (!(p.device == device)) continue;
    if (p.stale) state_->copy_top(p);  // no free since the peak: the live set is the peak's
    return p.peak;
  }
  return {};
}

std::vector<Device> MemoryTracker::devices() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  std::vector<Device> out;
  for (const auto& p : state_->devices) out.push_back(p.device);
  return out;
}

AllocationLabel::AllocationLabel(const char* op, const char* role, const Shape* shape, DType dtype)
    : op_(op), role_(role), shape_(shape), dtype_(dtype), outer_(t_label) {
  if (op_ == nullptr && outer_ != nullptr) {
    op_ = outer_->op_;
    role_ = outer_->role_;
  }
  t_label = this;
}

AllocationLabel::~AllocationLabel() { t_label = outer_; }

const AllocationLabel* AllocationLabel::current() { return t_label; }

std::string format_memory_bytes(int64_t bytes) {
  const double b = static_cast<double>(bytes);
  const double abs = b < 0 ? -b : b;
  if (abs >= 1024.0 * 1024 * 1024) return fmt::format("{:.1f} GiB", b / (1024.0 * 1024 * 1024));
  if (abs >= 1024.0 * 1024) return fmt::format("{:.1f} MiB", b / (1024.0 * 1024));
  if (abs >= 1024.0) return fmt::format("{:.1f} KiB", b / 1024.0);
  return fmt::format("{} B", bytes);
}

std::string TrackedBlock::str() const {
  std::string s = op != nullptr ? fmt::format("{} {}", op, role) : std::string(role);
  if (has_shape) s += fmt::format(" {} {}", shape.str(), dtype_name(dtype));
  return s + " " + format_memory_bytes(bytes);
}

}  // namespace ingot
