// CudaBackend: the backend "cuda" (device kind CUDA) over one DeviceContext; routes each op to its
// family (own kernels, cuBLASLt matmul, cuDNN convolution) and serves device memory and copies.
#pragma once

#include <memory>

#include "conv_engine.h"
#include "device_context.h"
#include "ingot/plugin/sdk.h"

namespace ingot::cuda {

class CudaBackend final : public sdk::BackendImpl {
 public:
  explicit CudaBackend(int device);

  bool supports(const sdk::OpCall& call) override;
  void execute(const sdk::OpCall& call, const ingot_exec_context& ctx) override;
  void plan_cache_stats(ingot_plan_cache_stats& stats) override;
  const char* impl_name(int32_t op) override;

  void* alloc(size_t bytes) { return dev_.allocator().allocate(bytes); }
  void free(void* ptr) { dev_.allocator().release(ptr); }
  /// Host <-> device and device <-> device copies on the compute stream; returns once `dst` holds
  /// the data when it is host memory or when `src` is host memory the caller may reuse. `async`
  /// (the ABI's copy_async) returns once the copy is queued: the caller synchronizes.
  void copy(void* dst, int32_t dst_kind, const void* src, int32_t src_kind, size_t bytes, const ingot_exec_context* ctx,
            bool async = false);
  DeviceContext& device() { return dev_; }

  /// The ABI table of a CudaBackend (sdk table plus alloc / free / copy and the ABI 1.2 device
  /// entries); takes ownership.
  static ingot_backend make_table(CudaBackend* impl);
  /// Fills the ABI 1.2 entries: memory stats, pinned memory, copy_async, streams, events
  /// (device_entries.cpp).
  static void fill_device_entries(ingot_backend& table);

 private:
  DeviceContext dev_;
  std::unique_ptr<ConvEngine> conv_;
};

}  // namespace ingot::cuda
