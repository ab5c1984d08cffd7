// DeviceFeeder: hands out a loader's batches on the model's device, a few batches ahead. Each
// batch is staged in pinned host memory and copied on a side stream of the device (or queued on
// its compute stream when the backend has no side streams), so its copy overlaps the compute of
// the batches before it (torch's pin_memory + non_blocking copies on a copy stream); the compute
// stream waits for a batch's copy only when the batch is handed out.
#pragma once

#include <deque>
#include <memory>
#include <optional>

#include "ingot/data/data_loader.h"
#include "ingot/runtime/device_event.h"
#include "ingot/runtime/device_stream.h"
#include "ingot/tensor/device.h"

namespace ingot::train {

class DeviceFeeder {
 public:
  /// `depth`: batches queued to the device ahead of the one in use (at least 1). On the CPU,
  /// batches pass through untouched.
  DeviceFeeder(data::DataLoader& loader, Device device, int depth);

  /// The next batch with inputs and targets on the device; nothing at the epoch's end.
  std::optional<data::Batch> next();
  /// Drops the batches queued ahead (after loader.stop(), or before a new epoch).
  void reset();
  Device device() const { return device_; }
  /// Whether copies run on a side stream (else on the compute stream).
  bool uses_side_stream() const { return side_ != nullptr; }

 private:
  struct InFlight {
    data::Batch batch;  ///< on the device
    data::Batch staged;  ///< the pinned host copies, kept until the copy is certainly done
    std::shared_ptr<Event> copied;  ///< recorded on the side stream after the copies (if any)
  };
  void fill();

  data::DataLoader& loader_;
  Device device_;
  int depth_;
  bool pinned_ = false;
  std::unique_ptr<Stream> side_;
  bool exhausted_ = false;
  std::deque<InFlight> queue_;
  std::optional<InFlight> in_use_;
};

}  // namespace ingot::train
