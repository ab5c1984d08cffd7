// Pinned host memory: an Allocator per backend over its host_alloc_pinned / host_free_pinned,
// used as the storage of host tensors; and to_async over the backend's copy_async.
#include "ingot/runtime/pinned_memory.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_set>

#include "ingot/base/grad_mode.h"
#include "ingot/runtime/backend.h"
#include "ingot/runtime/device_memory.h"
#include "ingot/runtime/device_stream.h"
#include "ingot/runtime/dispatch.h"

namespace ingot {
namespace {

/// Page-locked blocks straight from one backend (no cache: buffers are meant to be reused).
class PinnedAllocator final : public Allocator {
 public:
  PinnedAllocator(const Backend& b, int32_t index) : backend_(b), index_(index) {}
  void* allocate(size_t bytes) override {
    void* p = backend_.host_alloc_pinned(index_, std::max<size_t>(bytes, 64));  // a unique pointer even for 0 bytes
    std::lock_guard<std::mutex> lock(mu_);
    live_.insert(p);
    stats_.allocations++;
    stats_.allocated += static_cast<int64_t>(bytes);
    stats_.reserved = stats_.allocated;
    stats_.peak_allocated = std::max(stats_.peak_allocated, stats_.allocated);
    return p;
  }
  void deallocate(void* ptr, size_t bytes) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      live_.erase(ptr);
      stats_.allocated -= static_cast<int64_t>(bytes);
      stats_.reserved = stats_.allocated;
    }
    backend_.host_free_pinned(index_, ptr);
  }
  MemoryStats stats() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return stats_;
  }
  void reset_peak() override {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.peak_allocated = stats_.allocated;
  }
  void empty_cache() override {}
  bool owns(const void* ptr) const {
    std::lock_guard<std::mutex> lock(mu_);
    return live_.count(const_cast<void*>(ptr)) != 0;
  }

 private:
  const Backend& backend_;
  int32_t index_;  // the device it was asked for (pinned blocks serve every device of the backend)
  mutable std::mutex mu_;
  std::unordered_set<void*> live_;
  MemoryStats stats_;
};

std::mutex& allocators_mutex() {
  static auto* mu = new std::mutex();
  return *mu;
}

// Never destroyed: pinned tensors held by static objects may be released after main returns.
std::map<const Backend*, std::unique_ptr<PinnedAllocator>>& allocators() {
  static auto* map = new std::map<const Backend*, std::unique_ptr<PinnedAllocator>>();
  return *map;
}

PinnedAllocator& pinned_allocator(Device accel) {
  INGOT_CHECK(!accel.is_cpu(), "pinned memory belongs to an accelerator: name one (e.g. cuda:0), not cpu");
  const Backend& b = device_backend(accel);
  INGOT_CHECK(b.offers_pinned_memory(), "{}: backend {} (plugin {}, ABI {}.{}) does not support pinned host memory",
              accel.str(), b.name(), b.plugin(), INGOT_ABI_MAJOR, b.abi_minor());
  std::lock_guard<std::mutex> lock(allocators_mutex());
  auto& slot = allocators()[&b];
  if (!slot) slot = std::make_unique<PinnedAllocator>(b, accel.index);
  return *slot;
}

}  // namespace

bool pinned_memory_available(Device accel) {
  if (accel.is_cpu()) return false;
  try {
    return device_backend(accel).offers_pinned_memory();
  } catch (const BackendMissingError&) {
    return false;
  }
}

Tensor empty_pinned(const Shape& shape, DType dtype, Device accel) {
  for (int64_t d : shape) INGOT_CHECK_SHAPE(d >= 0, "empty_pinned: negative dimension in shape {}", shape.str());
  PinnedAllocator& alloc = pinned_allocator(accel);
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = std::make_shared<Storage>(static_cast<size_t>(shape.numel() * dtype_size(dtype)), Device::cpu(), alloc);
  impl->dtype = dtype;
  impl->shape = shape;
  impl->strides = contiguous_strides(shape);
  return Tensor(std::move(impl));
}

Tensor pin_memory(const Tensor& t, Device accel) {
  INGOT_CHECK(t.device().is_cpu(), "pin_memory: the tensor is on {}; only host tensors can be pinned", t.device().str());
  Tensor out = empty_pinned(t.shape(), t.dtype(), accel);
  NoGradGuard no_grad;
  out.copy_(t);
  return out;
}

bool is_pinned(const Tensor& t) {
  if (!t.defined() || !t.device().is_cpu() || t.storage() == nullptr) return false;
  std::lock_guard<std::mutex> lock(allocators_mutex());
  for (const auto& [backend, alloc] : allocators())
    if (alloc->owns(t.storage()->data())) return true;
  return false;
}

Tensor to_async(const Tensor& src, Device device, const Stream* stream) {
  if (device == src.device()) return src;
  INGOT_CHECK(src.device().is_cpu() != device.is_cpu(), "to_async: {} -> {}: one side must be the host (cpu)",
              src.device().str(), device.str());
  INGOT_CHECK(!src.requires_grad(), "to_async: the tensor requires grad; use to() so autograd records the copy");
  const Device accel = device.is_cpu() ? src.device() : device;
  const Backend& b = device_backend(accel);
  if (!b.offers_copy_async()) return src.to(device);
  const Tensor from = src.contiguous();
  Tensor dst = Tensor::empty(from.shape(), from.dtype(), device);
  const size_t bytes = static_cast<size_t>(from.numel() * dtype_size(from.dtype()));
  const auto* data = static_cast<const char*>(from.storage()->data()) + from.offset() * dtype_size(from.dtype());
  ingot_exec_context ctx = exec_context();
  if (stream != nullptr) {
    INGOT_CHECK(stream->device() == accel, "to_async: a stream of {} for a copy to {}", stream->device().str(),
                accel.str());
    ctx.stream = stream->handle();
  }
  b.copy_async(accel.index, dst.storage()->data(), device.kind, data, from.device().kind, bytes, ctx);
  return dst;
}

}  // namespace ingot
