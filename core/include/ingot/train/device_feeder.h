// DeviceFeeder: hands out a loader's batches on the model's device, a few batches ahead. Each
// batch is staged in pinned host memory and queued to the device without waiting, so its copy
// overlaps the compute of the batches before it (torch's pin_memory + non_blocking copies).
#pragma once

#include <deque>
#include <optional>

#include "ingot/data/data_loader.h"
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

 private:
  struct InFlight {
    data::Batch batch;  ///< on the device
    data::Batch staged;  ///< the pinned host copies, kept until the copy is certainly done
  };
  void fill();

  data::DataLoader& loader_;
  Device device_;
  int depth_;
  bool pinned_ = false;
  bool exhausted_ = false;
  std::deque<InFlight> queue_;
  std::optional<InFlight> in_use_;
};

}  // namespace ingot::train
