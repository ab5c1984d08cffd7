// SDK device side: DeviceImpl, the base class of a device backend's memory, copies, streams and
// events (every method takes the device index), and the device tables the SDK builds: one over a
// DeviceImpl, and the host one (device_count 1, no memory entries). Header-only, C++17.
#pragma once

#include "ingot/plugin/sdk_core.h"

namespace ingot::sdk {

/// Which optional entries of the device table a DeviceImpl implements (the others stay NULL, so
/// core answers "does not support ..." without calling the plugin).
struct DeviceOffers {
  bool copy_async = false;
  bool pinned_memory = false;  ///< host_alloc_pinned and host_free_pinned
  bool synchronize = false;
  bool native_stream = false;
  bool events = false;        ///< create, record, synchronize, elapsed_ms, destroy
  bool memory_stats = false;  ///< memory_stats, reset_peak_memory_stats, empty_cache
  bool streams = false;       ///< stream_create, stream_destroy, stream_wait_event (side streams)
  bool memory_info = false;   ///< memory_info: the device's free and total bytes
};

/// Base class of a device backend's device side. `device` is always in [0, device_count()): the
/// SDK checks it before calling any method.
class DeviceImpl {
 public:
  virtual ~DeviceImpl() = default;
  virtual int32_t device_count() = 0;
  virtual void* alloc(int32_t device, size_t bytes) = 0;
  virtual void free(int32_t device, void* ptr) = 0;
  /// Host <-> device (or within the device) copy; `async` is the copy_async entry.
  virtual void copy(int32_t device, void* dst, int32_t dst_kind, const void* src, int32_t src_kind, size_t bytes,
                    const ingot_exec_context* ctx, bool async) = 0;
  virtual DeviceOffers offers() const { return {}; }

  // Optional entries (see DeviceOffers); the defaults are never reached through the table.
  virtual void* host_alloc_pinned(int32_t device, size_t) { return unsupported<void*>(device); }
  virtual void host_free_pinned(int32_t device, void*) { unsupported<int>(device); }
  virtual void synchronize(int32_t device) { unsupported<int>(device); }
  virtual void* native_stream(int32_t device) { return unsupported<void*>(device); }
  virtual void* event_create(int32_t device) { return unsupported<void*>(device); }
  virtual void event_record(int32_t device, void*, const ingot_exec_context*) { unsupported<int>(device); }
  virtual void event_synchronize(int32_t device, void*) { unsupported<int>(device); }
  virtual double event_elapsed_ms(int32_t device, void*, void*) { return unsupported<double>(device); }
  virtual void event_destroy(int32_t device, void*) { unsupported<int>(device); }
  virtual ingot_memory_stats memory_stats(int32_t device) { return unsupported<ingot_memory_stats>(device); }
  virtual void reset_peak_memory_stats(int32_t device) { unsupported<int>(device); }
  virtual void empty_cache(int32_t device) { unsupported<int>(device); }
  virtual void* stream_create(int32_t device) { return unsupported<void*>(device); }
  virtual void stream_destroy(int32_t device, void*) { unsupported<int>(device); }
  /// Work queued later on `stream` (nullptr: the compute stream) waits for `event`.
  virtual void stream_wait_event(int32_t device, void* /*stream*/, void* /*event*/) { unsupported<int>(device); }
  /// The device's memory in bytes: free for new allocations now, and in all.
  virtual void memory_info(int32_t device, int64_t& /*free_bytes*/, int64_t& /*total_bytes*/) {
    unsupported<int>(device);
  }

 private:
  template <class R>
  static R unsupported(int32_t device) {
    throw Failure(INGOT_ERR_UNSUPPORTED, "device " + std::to_string(device) + ": entry not implemented");
  }
};

namespace detail {

/// The DeviceImpl behind a table's self, after checking the device index.
inline DeviceImpl& device_of(void* self, int32_t device) {
  auto& impl = *static_cast<DeviceImpl*>(self);
  const int32_t count = impl.device_count();
  if (device < 0 || device >= count)
    throw Failure(INGOT_ERR_INVALID_ARGUMENT,
                  "no device " + std::to_string(device) + " (this backend serves " + std::to_string(count) + ")");
  return impl;
}

inline int32_t host_device_count(void*) noexcept { return 1; }

}  // namespace detail

/// The device table of a host backend: device kind CPU, one device, no memory entries.
inline ingot_device_table make_host_device_table() {
  ingot_device_table t{};
  t.struct_size = sizeof(ingot_device_table);
  t.abi_minor = INGOT_ABI_MINOR;
  t.self = nullptr;
  t.device_kind = INGOT_DEVICE_CPU;
  t.device_count = &detail::host_device_count;
  return t;
}

/// The device table of `impl` for devices of `device_kind` (impl must outlive the table).
inline ingot_device_table make_device_table(DeviceImpl* impl, int32_t device_kind) {
  using detail::device_of;
  ingot_device_table t{};
  t.struct_size = sizeof(ingot_device_table);
  t.abi_minor = INGOT_ABI_MINOR;
  t.self = impl;
  t.device_kind = device_kind;
  t.device_count = [](void* self) noexcept -> int32_t {
    int32_t n = 0;
    quietly([&] { n = static_cast<DeviceImpl*>(self)->device_count(); });
    return n;
  };
  t.alloc = [](void* self, int32_t dev, size_t bytes, void** ptr) noexcept {
    return guarded([&] { *ptr = device_of(self, dev).alloc(dev, bytes); });
  };
  t.free = [](void* self, int32_t dev, void* ptr) noexcept { quietly([&] { device_of(self, dev).free(dev, ptr); }); };
  t.copy = [](void* self, int32_t dev, void* dst, int32_t dk, const void* src, int32_t sk, size_t bytes,
              const ingot_exec_context* ctx) noexcept {
    return guarded([&] { device_of(self, dev).copy(dev, dst, dk, src, sk, bytes, ctx, false); });
  };
  const DeviceOffers offers = impl->offers();
  if (offers.copy_async)
    t.copy_async = [](void* self, int32_t dev, void* dst, int32_t dk, const void* src, int32_t sk, size_t bytes,
                      const ingot_exec_context* ctx) noexcept {
      return guarded([&] { device_of(self, dev).copy(dev, dst, dk, src, sk, bytes, ctx, true); });
    };
  if (offers.pinned_memory) {
    t.host_alloc_pinned = [](void* self, int32_t dev, size_t bytes, void** ptr) noexcept {
      return guarded([&] { *ptr = device_of(self, dev).host_alloc_pinned(dev, bytes); });
    };
    t.host_free_pinned = [](void* self, int32_t dev, void* ptr) noexcept {
      quietly([&] { device_of(self, dev).host_free_pinned(dev, ptr); });
    };
  }
  if (offers.synchronize)
    t.synchronize = [](void* self, int32_t dev) noexcept {
      return guarded([&] { device_of(self, dev).synchronize(dev); });
    };
  if (offers.native_stream)
    t.native_stream = [](void* self, int32_t dev, void** stream) noexcept {
      return guarded([&] { *stream = device_of(self, dev).native_stream(dev); });
    };
  if (offers.events) {
    t.event_create = [](void* self, int32_t dev, void** event) noexcept {
      return guarded([&] { *event = device_of(self, dev).event_create(dev); });
    };
    t.event_record = [](void* self, int32_t dev, void* event, const ingot_exec_context* ctx) noexcept {
      return guarded([&] { device_of(self, dev).event_record(dev, event, ctx); });
    };
    t.event_synchronize = [](void* self, int32_t dev, void* event) noexcept {
      return guarded([&] { device_of(self, dev).event_synchronize(dev, event); });
    };
    t.event_elapsed_ms = [](void* self, int32_t dev, void* start, void* end, double* ms) noexcept {
      return guarded([&] { *ms = device_of(self, dev).event_elapsed_ms(dev, start, end); });
    };
    t.event_destroy = [](void* self, int32_t dev, void* event) noexcept {
      quietly([&] { device_of(self, dev).event_destroy(dev, event); });
    };
  }
  if (offers.memory_stats) {
    t.memory_stats = [](void* self, int32_t dev, ingot_memory_stats* out) noexcept {
      return guarded([&] {
        *out = device_of(self, dev).memory_stats(dev);
        out->struct_size = sizeof(ingot_memory_stats);
        out->abi_minor = INGOT_ABI_MINOR;
      });
    };
    t.reset_peak_memory_stats = [](void* self, int32_t dev) noexcept {
      return guarded([&] { device_of(self, dev).reset_peak_memory_stats(dev); });
    };
    t.empty_cache = [](void* self, int32_t dev) noexcept {
      return guarded([&] { device_of(self, dev).empty_cache(dev); });
    };
  }
  if (offers.streams) {
    t.stream_create = [](void* self, int32_t dev, void** stream) noexcept {
      return guarded([&] { *stream = device_of(self, dev).stream_create(dev); });
    };
    t.stream_destroy = [](void* self, int32_t dev, void* stream) noexcept {
      quietly([&] { device_of(self, dev).stream_destroy(dev, stream); });
    };
    t.stream_wait_event = [](void* self, int32_t dev, void* stream, void* event) noexcept {
      return guarded([&] { device_of(self, dev).stream_wait_event(dev, stream, event); });
    };
  }
  if (offers.memory_info) {
    t.memory_info = [](void* self, int32_t dev, int64_t* free_bytes, int64_t* total_bytes) noexcept {
      return guarded([&] { device_of(self, dev).memory_info(dev, *free_bytes, *total_bytes); });
    };
  }
  return t;
}

}  // namespace ingot::sdk
