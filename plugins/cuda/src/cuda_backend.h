// CudaBackend: the backend "cuda" (device kind CUDA) serving every visible GPU. Its compute side
// routes each op by family (own kernels, cuBLASLt matmul, cuDNN convolution) on the device the
// descriptors name; its device side serves memory, copies, streams and events per device. Each
// GPU has its own DeviceState (stream, handles, caching allocator, conv engine, error record),
// made on first use. Errors kernels report are raised at the device's synchronization points.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>

#include "conv_engine.h"
#include "device_context.h"
#include "device_errors.h"
#include "ingot/plugin/sdk.h"

namespace ingot::cuda {

/// One GPU: its context (compute stream, library handles, caching allocator), conv engine and
/// the record its kernels report errors into.
struct DeviceState {
  explicit DeviceState(int device) : ctx(device), conv(make_legacy_conv_engine(ctx)), errors(device) {}
  DeviceContext ctx;
  std::unique_ptr<ConvEngine> conv;
  DeviceErrors errors;
};

class CudaBackend final : public sdk::ComputeImpl, public sdk::DeviceImpl {
 public:
  /// Serves devices 0 .. device_count - 1 (cudaGetDeviceCount); creates no context yet. Reads
  /// INGOT_CUDA_SYNC once: when set, every op is synchronized and checked before execute returns.
  explicit CudaBackend(int32_t device_count);
  ~CudaBackend() override;

  // ---- compute (cuda_backend.cpp) ----
  bool supports(const sdk::OpCall& call) override;
  void execute(const sdk::OpCall& call, const ingot_exec_context& ctx) override;
  void plan_cache_stats(ingot_plan_cache_stats& stats) override;
  const char* impl_name(int32_t op) override;

  // ---- device (cuda_device.cpp) ----
  int32_t device_count() override { return count_; }
  sdk::DeviceOffers offers() const override;
  void* alloc(int32_t device, size_t bytes) override;
  void free(int32_t device, void* ptr) override;
  /// Host <-> device and device <-> device copies on the device's compute stream; returns once
  /// `dst` holds the data when it is host memory, or once a host `src` may be reused. `async`
  /// (copy_async) returns once the copy is queued: the caller synchronizes.
  void copy(int32_t device, void* dst, int32_t dst_kind, const void* src, int32_t src_kind, size_t bytes,
            const ingot_exec_context* ctx, bool async) override;
  void* host_alloc_pinned(int32_t device, size_t bytes) override;
  void host_free_pinned(int32_t device, void* ptr) override;
  void synchronize(int32_t device) override;
  void* native_stream(int32_t device) override;
  void* event_create(int32_t device) override;
  void event_record(int32_t device, void* event, const ingot_exec_context* ctx) override;
  void event_synchronize(int32_t device, void* event) override;
  double event_elapsed_ms(int32_t device, void* start, void* end) override;
  void event_destroy(int32_t device, void* event) override;
  void* stream_create(int32_t device) override;
  void stream_destroy(int32_t device, void* stream) override;
  void stream_wait_event(int32_t device, void* stream, void* event) override;
  void memory_info(int32_t device, int64_t& free_bytes, int64_t& total_bytes) override;
  ingot_memory_stats memory_stats(int32_t device) override;
  void reset_peak_memory_stats(int32_t device) override;
  void empty_cache(int32_t device) override;

  /// Device `index`'s state (created on first use), after cudaSetDevice(index) on this thread.
  /// Throws sdk::Failure for an index outside 0 .. device_count - 1.
  DeviceState& device(int32_t index);

 private:
  void wait_for_owner(const void* ptr, int32_t dev);
  /// INGOT_CUDA_SYNC=1: waits for the op and raises what it left (a fault, a reported error).
  /// Marks the call's device tensors as used on side stream `stream` (CachingAllocator::record_stream).
  static void record_stream(const sdk::OpCall& call, DeviceState& state, cudaStream_t stream);
  void finish_op(int32_t op, int32_t dev, DeviceState& state, cudaStream_t stream);

  int32_t count_;
  std::unique_ptr<std::atomic<DeviceState*>[]> states_;
  std::mutex create_mu_;
  std::atomic<int32_t> last_device_{0};  // whose conv engine impl_name reports
  const bool sync_each_op_;
};

}  // namespace ingot::cuda
