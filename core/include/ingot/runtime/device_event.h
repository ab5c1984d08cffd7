// Event: a marker in a device's stream of work, for timing and waiting (torch.cuda.Event with
// timing on). On the CPU, whose ops are synchronous, it is the host's steady clock.
#pragma once

#include <chrono>

#include "ingot/tensor/device.h"

namespace ingot {

class Backend;
class Stream;

class Event {
 public:
  /// An unrecorded event on `device`; throws when the device's backend offers no events.
  explicit Event(Device device = Device::cpu());
  ~Event();
  Event(Event&& other) noexcept;
  Event& operator=(Event&& other) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  /// Marks the current end of the device's compute stream, or of `stream` (may be recorded again).
  void record(const Stream* stream = nullptr);
  /// Makes the work queued later on the compute stream (or on `stream`) wait for this event;
  /// returns at once. On the CPU, where work is synchronous, a no-op.
  void wait(const Stream* stream = nullptr) const;
  /// Returns once the work queued before the last record() has finished.
  void synchronize() const;
  /// Milliseconds from this event to `end` (both recorded, on the same device); waits for `end`.
  double elapsed_ms(const Event& end) const;

  bool recorded() const { return recorded_; }
  Device device() const { return device_; }

 private:
  void release() noexcept;

  Device device_;
  const Backend* backend_ = nullptr;  ///< null on the CPU
  void* handle_ = nullptr;
  std::chrono::steady_clock::time_point host_time_{};
  bool recorded_ = false;
};

}  // namespace ingot
