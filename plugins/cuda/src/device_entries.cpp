// The ABI 1.2 entries of the cuda backend: allocator stats and empty_cache, pinned host memory
// (cudaHostAlloc), copy_async, synchronize, the compute stream's handle, and timing events.
#include <string>

#include "cuda_backend.h"
#include "cuda_check.h"

namespace ingot::cuda {
namespace {

CudaBackend& backend_of(void* self) { return *static_cast<CudaBackend*>(static_cast<sdk::BackendImpl*>(self)); }

// This backend serves one device; another index is a caller error, not a crash.
DeviceContext& device_of(void* self, int32_t index) {
  DeviceContext& dev = backend_of(self).device();
  if (index != dev.device())
    throw sdk::Failure(INGOT_ERR_INVALID_ARGUMENT, "cuda backend serves device " + std::to_string(dev.device()) +
                                                       " only; asked for device " + std::to_string(index));
  INGOT_CUDA_CHECK(cudaSetDevice(dev.device()));
  return dev;
}

ingot_status* memory_stats(void* self, int32_t index, ingot_memory_stats* out) {
  return sdk::guarded([&] {
    const AllocatorStats s = device_of(self, index).allocator().stats();
    out->struct_size = sizeof(ingot_memory_stats);
    out->abi_minor = INGOT_ABI_MINOR;
    out->allocated = s.allocated;
    out->reserved = s.reserved;
    out->peak_allocated = s.peak_allocated;
    out->allocations = s.allocations;
    out->cache_hits = s.cache_hits;
  });
}

ingot_status* reset_peak(void* self, int32_t index) {
  return sdk::guarded([&] { device_of(self, index).allocator().reset_peak(); });
}

ingot_status* empty_cache(void* self, int32_t index) {
  return sdk::guarded([&] { device_of(self, index).allocator().empty_cache(); });
}

// Portable: usable for copies to every device of the process, not only the current one.
ingot_status* host_alloc_pinned(void* self, size_t bytes, void** ptr) {
  return sdk::guarded([&] {
    INGOT_CUDA_CHECK(cudaSetDevice(backend_of(self).device().device()));
    INGOT_CUDA_CHECK(cudaHostAlloc(ptr, bytes, cudaHostAllocPortable));
  });
}

// The block may still be the source or target of a queued asynchronous copy: drain the stream first.
void host_free_pinned(void* self, void* ptr) {
  if (ptr == nullptr) return;
  (void)cudaStreamSynchronize(backend_of(self).device().stream());
  (void)cudaFreeHost(ptr);
  (void)cudaGetLastError();
}

ingot_status* copy_async(void* self, void* dst, int32_t dst_kind, const void* src, int32_t src_kind, size_t bytes,
                         const ingot_exec_context* ctx) {
  return sdk::guarded([&] { backend_of(self).copy(dst, dst_kind, src, src_kind, bytes, ctx, true); });
}

ingot_status* synchronize(void* self, int32_t index) {
  return sdk::guarded([&] { INGOT_CUDA_CHECK(cudaStreamSynchronize(device_of(self, index).stream())); });
}

ingot_status* native_stream(void* self, int32_t index, void** stream) {
  return sdk::guarded([&] { *stream = device_of(self, index).stream(); });
}

ingot_status* event_create(void* self, int32_t index, void** event) {
  return sdk::guarded([&] {
    device_of(self, index);
    cudaEvent_t e = nullptr;
    INGOT_CUDA_CHECK(cudaEventCreate(&e));  // default flags: timing enabled
    *event = e;
  });
}

ingot_status* event_record(void* self, void* event, const ingot_exec_context* ctx) {
  return sdk::guarded([&] {
    DeviceContext& dev = backend_of(self).device();
    INGOT_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(event), dev.stream_for(ctx)));
  });
}

ingot_status* event_synchronize(void* /*self*/, void* event) {
  return sdk::guarded([&] { INGOT_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(event))); });
}

ingot_status* event_elapsed_ms(void* /*self*/, void* start, void* end, double* ms) {
  return sdk::guarded([&] {
    INGOT_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(end)));
    float f = 0.0f;
    INGOT_CUDA_CHECK(cudaEventElapsedTime(&f, static_cast<cudaEvent_t>(start), static_cast<cudaEvent_t>(end)));
    *ms = f;
  });
}

void event_destroy(void* /*self*/, void* event) {
  (void)cudaEventDestroy(static_cast<cudaEvent_t>(event));
  (void)cudaGetLastError();
}

}  // namespace

void CudaBackend::fill_device_entries(ingot_backend& t) {
  t.memory_stats = &memory_stats;
  t.reset_peak_memory_stats = &reset_peak;
  t.empty_cache = &empty_cache;
  t.host_alloc_pinned = &host_alloc_pinned;
  t.host_free_pinned = &host_free_pinned;
  t.copy_async = &copy_async;
  t.synchronize = &synchronize;
  t.native_stream = &native_stream;
  t.event_create = &event_create;
  t.event_record = &event_record;
  t.event_synchronize = &event_synchronize;
  t.event_elapsed_ms = &event_elapsed_ms;
  t.event_destroy = &event_destroy;
}

}  // namespace ingot::cuda
