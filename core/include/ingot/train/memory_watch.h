// MemoryWatch: a run's memory as torch.cuda.memory_allocated / memory_reserved /
// max_memory_allocated show it, for the model's device (and the host when that is an
// accelerator): the numbers of the progress bar and metrics.jsonl, the peak restarted at each
// epoch, each stage's peaks and, with the memory report on, the largest tensors at each peak.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ingot/base/allocator.h"
#include "ingot/runtime/memory_tracker.h"
#include "ingot/tensor/device.h"

namespace ingot::train {

/// One device during one stage.
struct DeviceMemory {
  Device device;
  int64_t peak_allocated = 0;  ///< the stage's highest `allocated`, across the epochs' peak resets
  int64_t peak_reserved = 0;   ///< the highest `reserved` seen (see MemoryWatch::sample)
  TrackedPeak tensors;         ///< the tracker's peak and largest blocks (memory report only)
};

/// One stage of the pipeline ("setup" is what comes before the first: data, model, run folder).
struct StageMemory {
  std::string stage;
  std::vector<DeviceMemory> devices;  ///< the model's device first
};

class MemoryWatch {
 public:
  /// Watches `device` (and the host when `device` is an accelerator), resets their peaks and
  /// opens the "setup" stage. `track_tensors` starts the MemoryTracker (the memory report) until
  /// the watch is destroyed.
  explicit MemoryWatch(Device device, bool track_tensors = false, size_t top_n = 10);
  ~MemoryWatch();
  MemoryWatch(const MemoryWatch&) = delete;
  MemoryWatch& operator=(const MemoryWatch&) = delete;

  Device device() const { return devices_.front(); }
  bool tracks_tensors() const { return tracking_; }

  /// Counters of `device` (default: the model's): its backend allocator's where it reports them,
  /// else core's count of what it allocated there (no cache: reserved = allocated).
  MemoryStats stats() const { return stats(device()); }
  MemoryStats stats(Device device) const;

  /// An epoch starts: its peak is counted from here (the stage's peak keeps the earlier ones).
  void begin_epoch();
  /// Closes the open stage (recording its peaks) and opens `name`, peaks reset.
  void begin_stage(const std::string& name);
  /// Records the open stage's peaks (nothing when none is open).
  void end_stage();
  /// Notes the current `reserved`: a stage's peak reserved is the highest noted. Caches only grow
  /// between empty_cache calls, so noting at each record and at the stage's end finds it.
  void sample();
  /// Returns the cached blocks of the watched devices to the system (live tensors stay).
  void empty_caches() const;

  /// The stages recorded so far, in order.
  const std::vector<StageMemory>& stages() const { return stages_; }
  /// The highest `allocated` of `device` since the watch began, the open stage included.
  int64_t run_peak(Device device) const;

 private:
  struct Window {
    int64_t peak = 0, reserved = 0;  // folded in at each epoch's reset
  };
  void reset_peak(Device device) const;

  std::vector<Device> devices_;
  std::vector<Window> window_;  // by devices_ index, for the open stage
  std::optional<std::string> open_;
  std::vector<StageMemory> stages_;
  bool tracking_ = false;
};

/// Mebibytes (2^20 bytes) with three decimals, as metrics.jsonl's mem_*_mb fields hold them.
double to_mib(int64_t bytes);

}  // namespace ingot::train
