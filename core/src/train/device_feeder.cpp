// DeviceFeeder: a short queue of batches already copied (or being copied) to the device.
#include "ingot/train/device_feeder.h"

#include <algorithm>

#include "ingot/runtime/pinned_memory.h"

namespace ingot::train {

DeviceFeeder::DeviceFeeder(data::DataLoader& loader, Device device, int depth)
    : loader_(loader), device_(device), depth_(std::max(depth, 1)) {
  pinned_ = !device.is_cpu() && pinned_memory_available(device);
  if (pinned_ && Stream::available(device)) side_ = std::make_unique<Stream>(device);
}

void DeviceFeeder::fill() {
  while (!exhausted_ && static_cast<int>(queue_.size()) < depth_) {
    std::optional<data::Batch> b = loader_.next();
    if (!b) {
      exhausted_ = true;
      break;
    }
    InFlight f;
    f.batch = *b;
    if (pinned_) {
      f.staged = *b;
      f.staged.inputs = pin_memory(b->inputs, device_);
      f.staged.targets = pin_memory(b->targets, device_);
      f.batch.inputs = to_async(f.staged.inputs, device_, side_.get());
      f.batch.targets = to_async(f.staged.targets, device_, side_.get());
      if (side_) {
        f.copied = std::make_shared<Event>(device_);
        f.copied->record(side_.get());
      }
    } else {
      f.batch.inputs = b->inputs.to(device_);
      f.batch.targets = b->targets.to(device_);
    }
    queue_.push_back(std::move(f));
  }
}

std::optional<data::Batch> DeviceFeeder::next() {
  if (device_.is_cpu()) return loader_.next();
  // The staging buffers of the batch handed out before are released only now: its copy has been
  // consumed by the compute queued since (freeing pinned memory waits for the device's work).
  in_use_.reset();
  fill();
  if (queue_.empty()) {
    exhausted_ = false;  // the next epoch starts from an empty queue
    return std::nullopt;
  }
  in_use_ = std::move(queue_.front());
  queue_.pop_front();
  if (in_use_->copied) in_use_->copied->wait();  // the compute stream waits for this batch's copy
  fill();  // queue the following copies before the caller's compute on this batch
  return in_use_->batch;
}

void DeviceFeeder::reset() {
  queue_.clear();
  in_use_.reset();
  exhausted_ = false;
}

}  // namespace ingot::train
