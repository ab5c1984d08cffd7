// CudaBackend, device side: memory from each device's caching allocator, copies on its compute
// stream (or a side stream), pinned host memory (portable), synchronize, the stream's handle,
// timing events, side streams and allocator stats. Every call first makes its device current (CudaBackend::device).
// The calls that wait for the device (synchronize, a copy to the host, event waits) then raise an
// error a kernel reported (an index out of range) since the last check.
#include <string>

#include "cuda_backend.h"
#include "cuda_check.h"

namespace ingot::cuda {

// A device-to-device copy runs on `dev`'s stream; when the source lives on another GPU, the work
// that wrote it (queued on that GPU's stream) must finish first.
void CudaBackend::wait_for_owner(const void* ptr, int32_t dev) {
  cudaPointerAttributes attr{};
  const bool known = cudaPointerGetAttributes(&attr, ptr) == cudaSuccess;
  (void)cudaGetLastError();
  if (!known || attr.type != cudaMemoryTypeDevice || attr.device == dev || attr.device < 0 || attr.device >= count_)
    return;
  if (DeviceState* owner = states_[attr.device].load(std::memory_order_acquire))
    INGOT_CUDA_CHECK(cudaStreamSynchronize(owner->ctx.stream()));
}

sdk::DeviceOffers CudaBackend::offers() const {
  sdk::DeviceOffers o;
  o.copy_async = o.pinned_memory = o.synchronize = o.native_stream = o.events = o.memory_stats = o.streams =
      o.memory_info = true;
  return o;
}

void* CudaBackend::alloc(int32_t dev, size_t bytes) { return device(dev).ctx.allocator().allocate(bytes); }

void CudaBackend::free(int32_t dev, void* ptr) { device(dev).ctx.allocator().release(ptr); }

void CudaBackend::copy(int32_t dev, void* dst, int32_t dst_kind, const void* src, int32_t src_kind, size_t bytes,
                       const ingot_exec_context* ctx, bool async) {
  if (bytes == 0) return;
  DeviceState& state = device(dev);
  const cudaStream_t stream = state.ctx.stream_for(ctx);
  const bool to_host = dst_kind == INGOT_DEVICE_CPU, from_host = src_kind == INGOT_DEVICE_CPU;
  if (!to_host && !from_host) wait_for_owner(src, dev);
  if (stream != state.ctx.stream()) {  // a side-stream copy: its device buffers wait for it before reuse
    if (!to_host) state.ctx.allocator().record_stream(dst, stream);
    if (!from_host) state.ctx.allocator().record_stream(const_cast<void*>(src), stream);
  }
  // Device to device goes through unified addressing, so the two may be different GPUs.
  const cudaMemcpyKind kind = to_host ? (from_host ? cudaMemcpyHostToHost : cudaMemcpyDeviceToHost)
                                      : (from_host ? cudaMemcpyHostToDevice : cudaMemcpyDefault);
  INGOT_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, stream));
  if (async) return;  // pageable host memory still makes cudaMemcpyAsync block (CUDA's rule)
  bool wait = to_host;
  if (from_host && !to_host) {
    // From pageable memory cudaMemcpyAsync returns once the source is staged; from pinned memory
    // it returns at once, so wait for the caller's buffer (copy_async is the variant that does not).
    cudaPointerAttributes attr{};
    wait = cudaPointerGetAttributes(&attr, src) == cudaSuccess && attr.type == cudaMemoryTypeHost;
    (void)cudaGetLastError();
  }
  if (!wait) return;
  INGOT_CUDA_CHECK(cudaStreamSynchronize(stream));
  state.errors.check(false);
}

// Portable: usable for copies to every device of the process, not only `dev`.
void* CudaBackend::host_alloc_pinned(int32_t dev, size_t bytes) {
  device(dev);
  void* ptr = nullptr;
  INGOT_CUDA_CHECK(cudaHostAlloc(&ptr, bytes, cudaHostAllocPortable));
  return ptr;
}

// The block may still be the source or target of a queued asynchronous copy on any stream of any
// device (side streams included): drain the devices in use first.
void CudaBackend::host_free_pinned(int32_t, void* ptr) {
  if (ptr == nullptr) return;
  for (int32_t i = 0; i < count_; ++i) {
    if (states_[i].load(std::memory_order_acquire) == nullptr) continue;
    device(i);
    (void)cudaDeviceSynchronize();
  }
  (void)cudaFreeHost(ptr);
  (void)cudaGetLastError();
}

void CudaBackend::synchronize(int32_t dev) {
  DeviceState& state = device(dev);
  INGOT_CUDA_CHECK(cudaStreamSynchronize(state.ctx.stream()));
  state.errors.check(false);
}

void* CudaBackend::native_stream(int32_t dev) { return device(dev).ctx.stream(); }

void* CudaBackend::event_create(int32_t dev) {
  device(dev);
  cudaEvent_t e = nullptr;
  INGOT_CUDA_CHECK(cudaEventCreate(&e));  // default flags: timing enabled
  return e;
}

void CudaBackend::event_record(int32_t dev, void* event, const ingot_exec_context* ctx) {
  INGOT_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(event), device(dev).ctx.stream_for(ctx)));
}

void CudaBackend::event_synchronize(int32_t dev, void* event) {
  DeviceState& state = device(dev);
  INGOT_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(event)));
  state.errors.check(false);
}

double CudaBackend::event_elapsed_ms(int32_t dev, void* start, void* end) {
  device(dev);
  INGOT_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(end)));
  float ms = 0.0f;
  INGOT_CUDA_CHECK(cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(start), static_cast<cudaEvent_t>(end)));
  return ms;
}

void CudaBackend::event_destroy(int32_t dev, void* event) {
  device(dev);
  (void)cudaEventDestroy(static_cast<cudaEvent_t>(event));
  (void)cudaGetLastError();
}

// Side streams do not block on the legacy default stream; work on them is ordered with the compute
// stream only through events (stream_wait_event).
void* CudaBackend::stream_create(int32_t dev) {
  device(dev);
  cudaStream_t s = nullptr;
  INGOT_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  return s;
}

void CudaBackend::stream_destroy(int32_t dev, void* stream) {
  device(dev);
  (void)cudaStreamDestroy(static_cast<cudaStream_t>(stream));
  (void)cudaGetLastError();
}

void CudaBackend::stream_wait_event(int32_t dev, void* stream, void* event) {
  const cudaStream_t s = stream != nullptr ? static_cast<cudaStream_t>(stream) : device(dev).ctx.stream();
  device(dev);
  INGOT_CUDA_CHECK(cudaStreamWaitEvent(s, static_cast<cudaEvent_t>(event), 0));
}

ingot_memory_stats CudaBackend::memory_stats(int32_t dev) {
  const AllocatorStats s = device(dev).ctx.allocator().stats();
  ingot_memory_stats out{};
  out.struct_size = sizeof(ingot_memory_stats);
  out.abi_minor = INGOT_ABI_MINOR;
  out.allocated = s.allocated;
  out.reserved = s.reserved;
  out.peak_allocated = s.peak_allocated;
  out.allocations = s.allocations;
  out.cache_hits = s.cache_hits;
  return out;
}

void CudaBackend::memory_info(int32_t dev, int64_t& free_bytes, int64_t& total_bytes) {
  device(dev);  // sets up the device's context
  INGOT_CUDA_CHECK(cudaSetDevice(dev));
  size_t f = 0, t = 0;
  INGOT_CUDA_CHECK(cudaMemGetInfo(&f, &t));
  free_bytes = static_cast<int64_t>(f);
  total_bytes = static_cast<int64_t>(t);
}

void CudaBackend::reset_peak_memory_stats(int32_t dev) { device(dev).ctx.allocator().reset_peak(); }

void CudaBackend::empty_cache(int32_t dev) { device(dev).ctx.allocator().empty_cache(); }

}  // namespace ingot::cuda
