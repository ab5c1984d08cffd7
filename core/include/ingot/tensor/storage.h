// Storage: a reference-counted block of device memory, returned to its allocator when released.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "ingot/tensor/device.h"

namespace ingot {

class Allocator;
class Backend;

/// Raw memory shared by a tensor and its views.
class Storage {
 public:
  Storage(size_t nbytes, Device device, Allocator& allocator);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }
  /// Storages are numbered in the order they were made (from 1): a graph capture tells the
  /// tensors a step allocated from those that existed before it.
  uint64_t serial() const { return serial_; }
  /// The serial of the latest storage made so far (0: none).
  static uint64_t last_serial();

 private:
  void* data_ = nullptr;
  size_t nbytes_ = 0;
  Device device_;
  Allocator* allocator_;
  uint64_t serial_;
};

/// A backend-owned layout (e.g. a oneDNN blocked format) of a tensor's storage; the owner's
/// reference is dropped when the last tensor using it goes away.
class OpaqueLayout {
 public:
  OpaqueLayout(const Backend* owner, void* handle) : owner_(owner), handle_(handle) {}
  ~OpaqueLayout();
  OpaqueLayout(const OpaqueLayout&) = delete;
  OpaqueLayout& operator=(const OpaqueLayout&) = delete;
  const Backend* owner() const { return owner_; }
  void* handle() const { return handle_; }

 private:
  const Backend* owner_;
  void* handle_;
};

}  // namespace ingot
