// CudaBackend: op routing by family, device memory through the caching allocator, and copies.
#include "cuda_backend.h"

#include "cuda_check.h"
#include "kernels.h"
#include "op_matmul.h"

namespace ingot::cuda {
namespace {

using SupportsFn = bool (*)(const sdk::OpCall&);
using RunFn = void (*)(const sdk::OpCall&, const Launch&);
struct Family {
  SupportsFn supports;
  RunFn run;
};

// The kernel family of an op (MATMUL and the convolutions are routed before this).
Family family_of(int32_t op) {
  if (op >= INGOT_OP_NEG && op <= INGOT_OP_LOGICAL_NOT) return {unary_supports, unary_run};
  if (op >= INGOT_OP_ADD && op <= INGOT_OP_WHERE) return {binary_supports, binary_run};
  switch (op) {
    case INGOT_OP_RELU_BWD: return {binary_supports, binary_run};
    case INGOT_OP_FILL:
    case INGOT_OP_COPY:
    case INGOT_OP_CAST:
    case INGOT_OP_ARANGE: return {creation_supports, creation_run};
    case INGOT_OP_SUM:
    case INGOT_OP_MEAN:
    case INGOT_OP_MAX:
    case INGOT_OP_MIN:
    case INGOT_OP_ARGMAX: return {reduce_supports, reduce_run};
    case INGOT_OP_SOFTMAX:
    case INGOT_OP_LOG_SOFTMAX:
    case INGOT_OP_SOFTMAX_BWD:
    case INGOT_OP_LOG_SOFTMAX_BWD: return {softmax_supports, softmax_run};
    case INGOT_OP_LAYER_NORM:
    case INGOT_OP_LAYER_NORM_BWD:
    case INGOT_OP_BATCH_NORM:
    case INGOT_OP_BATCH_NORM_BWD: return {norm_supports, norm_run};
    case INGOT_OP_MAX_POOL2D:
    case INGOT_OP_MAX_POOL2D_BWD:
    case INGOT_OP_AVG_POOL2D:
    case INGOT_OP_AVG_POOL2D_BWD: return {pool_supports, pool_run};
    case INGOT_OP_CONCAT:
    case INGOT_OP_PAD:
    case INGOT_OP_GATHER:
    case INGOT_OP_INDEX_SELECT:
    case INGOT_OP_SCATTER_ADD: return {index_supports, index_run};
    case INGOT_OP_SORT:
    case INGOT_OP_TOPK: return {sort_supports, sort_run};
    case INGOT_OP_UNIFORM:
    case INGOT_OP_BERNOULLI:
    case INGOT_OP_NORMAL:
    case INGOT_OP_DROPOUT: return {rng_supports, rng_run};
    case INGOT_OP_GLOBAL_NORM:
    case INGOT_OP_SGD_UPDATE:
    case INGOT_OP_ADAM_UPDATE: return {optim_supports, optim_run};
    default: return {nullptr, nullptr};
  }
}

bool is_conv(int32_t op) {
  return op == INGOT_OP_CONV2D || op == INGOT_OP_CONV2D_BWD_DATA || op == INGOT_OP_CONV2D_BWD_WEIGHT;
}

}  // namespace

CudaBackend::CudaBackend(int device) : dev_(device), conv_(make_legacy_conv_engine(dev_)) {}

bool CudaBackend::supports(const sdk::OpCall& call) {
  if (call.op == INGOT_OP_MATMUL) return matmul_supports(call);
  if (is_conv(call.op)) return conv_->supports(call);
  const Family f = family_of(call.op);
  return f.supports != nullptr && f.supports(call);
}

void CudaBackend::execute(const sdk::OpCall& call, const ingot_exec_context& ctx) {
  if (!supports(call)) throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "cuda: this call of op " + std::to_string(call.op) + " is not supported (dtype, layout or device)");
  INGOT_CUDA_CHECK(cudaSetDevice(dev_.device()));
  const cudaStream_t stream = dev_.stream_for(&ctx);
  if (call.op == INGOT_OP_MATMUL) return matmul_run(call, dev_, stream);
  if (is_conv(call.op)) return conv_->run(call, stream);
  family_of(call.op).run(call, Launch{stream, &dev_.allocator(), dev_.props().multiProcessorCount});
}

void CudaBackend::plan_cache_stats(ingot_plan_cache_stats& stats) { conv_->cache_stats(stats); }

const char* CudaBackend::impl_name(int32_t op) {
  if (is_conv(op)) return conv_->last_algo();
  if (op == INGOT_OP_MATMUL) return "cublasLt";
  return family_of(op).run != nullptr ? "cuda_kernels" : nullptr;
}

void CudaBackend::copy(void* dst, int32_t dst_kind, const void* src, int32_t src_kind, size_t bytes,
                       const ingot_exec_context* ctx, bool async) {
  if (bytes == 0) return;
  INGOT_CUDA_CHECK(cudaSetDevice(dev_.device()));
  const cudaStream_t stream = dev_.stream_for(ctx);
  const bool to_host = dst_kind == INGOT_DEVICE_CPU, from_host = src_kind == INGOT_DEVICE_CPU;
  const cudaMemcpyKind kind = to_host ? (from_host ? cudaMemcpyHostToHost : cudaMemcpyDeviceToHost)
                                      : (from_host ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToDevice);
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
  if (wait) INGOT_CUDA_CHECK(cudaStreamSynchronize(stream));
}

namespace {
CudaBackend* self_of(void* self) { return static_cast<CudaBackend*>(static_cast<sdk::BackendImpl*>(self)); }

ingot_status* alloc_entry(void* self, size_t bytes, void** ptr) {
  return sdk::guarded([&] { *ptr = self_of(self)->alloc(bytes); });
}
void free_entry(void* self, void* ptr) {
  try {
    self_of(self)->free(ptr);
  } catch (...) {
  }
}
ingot_status* copy_entry(void* self, void* dst, int32_t dst_kind, const void* src, int32_t src_kind, size_t bytes,
                         const ingot_exec_context* ctx) {
  return sdk::guarded([&] { self_of(self)->copy(dst, dst_kind, src, src_kind, bytes, ctx); });
}
}  // namespace

ingot_backend CudaBackend::make_table(CudaBackend* impl) {
  ingot_backend t = sdk::make_backend_table(impl, "cuda", INGOT_DEVICE_CUDA, 100);
  t.alloc = &alloc_entry;
  t.free = &free_entry;
  t.copy = &copy_entry;
  fill_device_entries(t);
  return t;
}

}  // namespace ingot::cuda
