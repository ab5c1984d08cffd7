// MemoryTracker: which tensors hold a device's memory at its peak. Off by default; while on, core's
// guarded allocators report every block with what it is for (the op and output shape dispatch is
// allocating, a tensor's shape, a backend's workspace), and the largest live blocks are copied
// when a new peak has been reached. While off it costs one relaxed atomic load per allocation.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ingot/tensor/device.h"
#include "ingot/tensor/dtype.h"
#include "ingot/tensor/shape.h"

namespace ingot {

/// One live block as the tracker saw it allocated.
struct TrackedBlock {
  Device device;
  int64_t bytes = 0;            ///< Allocator::block_size of the request (the host's size class)
  const char* op = nullptr;     ///< the op that allocated it (a static name), nullptr outside ops
  const char* role = "tensor";  ///< "output" of the op, "workspace" of a backend call, or "tensor"
  bool has_shape = false;
  Shape shape;
  DType dtype = DType::F32;
  uint64_t serial = 0;  ///< allocation order (older first among equal sizes)
  /// "conv2d output [128, 32, 28, 28] f32 12.3 MiB", "tensor [60000, 784] f32 179.4 MiB".
  std::string str() const;
};

/// The highest live bytes a device reached in a window and the largest blocks live at that moment.
struct TrackedPeak {
  int64_t bytes = 0;              ///< live tracked bytes at the peak
  int64_t blocks = 0;             ///< live tracked blocks at the peak
  std::vector<TrackedBlock> top;  ///< the largest of them, largest first
};

class MemoryTracker {
 public:
  /// The process's tracker (never destroyed: blocks may be freed after main returns).
  static MemoryTracker& instance();
  /// Whether allocations are being tracked; what the allocation paths check first.
  static bool enabled() { return enabled_.load(std::memory_order_relaxed); }

  /// Forgets everything and starts tracking, keeping the `top_n` largest blocks at each peak.
  /// Blocks allocated before are not known: their frees are ignored.
  void start(size_t top_n = 10);
  /// Stops tracking and forgets every block.
  void stop();

  /// Called by the allocation paths (while enabled) after a block is allocated and before it is
  /// freed. The block's label is the innermost AllocationLabel of this thread.
  void on_alloc(Device device, const void* ptr, int64_t bytes);
  void on_free(const void* ptr);

  /// Tracked bytes live on `device` now.
  int64_t live_bytes(Device device) const;
  /// Starts a new window on every device: its peak starts at what is live now.
  void begin_window();
  /// The window's peak on `device` with the largest blocks live at that moment.
  TrackedPeak window_peak(Device device);
  /// The devices that had a tracked block since start().
  std::vector<Device> devices() const;

  MemoryTracker(const MemoryTracker&) = delete;
  MemoryTracker& operator=(const MemoryTracker&) = delete;

 private:
  MemoryTracker();
  ~MemoryTracker();
  struct State;
  static std::atomic<bool> enabled_;
  std::unique_ptr<State> state_;
};

/// What the allocations of this thread are for, until the scope ends (innermost wins). Build one
/// only when MemoryTracker::enabled(): the label's fields are read by on_alloc.
/// `op` nullptr keeps the enclosing scope's op (and its role: a tensor a backend makes during an
/// op is that op's "workspace"); `shape` nullptr means a block without one (a workspace).
class AllocationLabel {
 public:
  AllocationLabel(const char* op, const char* role, const Shape* shape, DType dtype);
  ~AllocationLabel();
  AllocationLabel(const AllocationLabel&) = delete;
  AllocationLabel& operator=(const AllocationLabel&) = delete;

  const char* op() const { return op_; }
  const char* role() const { return role_; }
  const Shape* shape() const { return shape_; }
  DType dtype() const { return dtype_; }
  /// This thread's innermost label, nullptr outside any.
  static const AllocationLabel* current();

 private:
  const char* op_;
  const char* role_;
  const Shape* shape_;
  DType dtype_;
  const AllocationLabel* outer_;
};

/// "12.3 MiB", "1.5 GiB", "512 B" (binary units, as torch.cuda.memory_summary).
std::string format_memory_bytes(int64_t bytes);

}  // namespace ingot
