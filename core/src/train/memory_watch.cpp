// MemoryWatch: allocator counters per watched device, peaks folded across the resets of epochs,
// stage windows, and the memory tracker's windows alongside them.
#include "ingot/train/memory_watch.h"

#include <algorithm>
#include <cmath>

#include "ingot/runtime/device_memory.h"
#include "ingot/runtime/registry.h"

namespace ingot::train {

MemoryWatch::MemoryWatch(Device device, bool track_tensors, size_t top_n) : tracking_(track_tensors) {
  devices_.push_back(device);
  if (!device.is_cpu()) devices_.push_back(Device::cpu());
  window_.resize(devices_.size());
  if (tracking_) MemoryTracker::instance().start(top_n);
  begin_stage("setup");
}

MemoryWatch::~MemoryWatch() {
  if (tracking_) MemoryTracker::instance().stop();
}

MemoryStats MemoryWatch::stats(Device device) const {
  if (memory_stats_available(device)) return memory_stats(device);
  return BackendRegistry::instance().allocator(device).stats();
}

void MemoryWatch::reset_peak(Device device) const {
  if (memory_stats_available(device)) {
    reset_peak_memory_stats(device);
  } else {
    BackendRegistry::instance().allocator(device).reset_peak();
  }
}

void MemoryWatch::begin_epoch() {
  for (size_t i = 0; i < devices_.size(); ++i) {
    const MemoryStats s = stats(devices_[i]);
    window_[i].peak = std::max(window_[i].peak, s.peak_allocated);
    window_[i].reserved = std::max(window_[i].reserved, s.reserved);
    reset_peak(devices_[i]);
  }
}

void MemoryWatch::begin_stage(const std::string& name) {
  end_stage();
  for (size_t i = 0; i < devices_.size(); ++i) {
    reset_peak(devices_[i]);
    const MemoryStats s = stats(devices_[i]);
    window_[i] = Window{s.allocated, s.reserved};
  }
  if (tracking_) MemoryTracker::instance().begin_window();
  open_ = name;
}

void MemoryWatch::end_stage() {
  if (!open_) return;
  StageMemory stage{*open_, {}};
  for (size_t i = 0; i < devices_.size(); ++i) {
    const MemoryStats s = stats(devices_[i]);
    DeviceMemory d{
        devices_[i], std::max(window_[i].peak, s.peak_allocated), std::max(window_[i].reserved, s.reserved), {}};
    if (tracking_) d.tensors = MemoryTracker::instance().window_peak(devices_[i]);
    stage.devices.push_back(std::move(d));
  }
  stages_.push_back(std::move(stage));
  open_.reset();
}

void MemoryWatch::sample() {
  for (size_t i = 0; i < devices_.size(); ++i)
    window_[i].reserved = std::max(window_[i].reserved, stats(devices_[i]).reserved);
}

void MemoryWatch::empty_caches() const {
  for (const Device d : devices_) BackendRegistry::instance().allocator(d).empty_cache();
}

int64_t MemoryWatch::run_peak(Device device) const {
  int64_t peak = 0;
  for (const StageMemory& st : stages_)
    for (const DeviceMemory& d : st.devices)
      if (d.device == device) peak = std::max(peak, d.peak_allocated);
  for (size_t i = 0; i < devices_.size(); ++i)
    if (open_ && devices_[i] == device) peak = std::max({peak, window_[i].peak, stats(device).peak_allocated});
  return peak;
}

double to_mib(int64_t bytes) { return std::round(static_cast<double>(bytes) / 1048.576) / 1000.0; }

}  // namespace ingot::train
