// CudaBackend, compute side: routing by op family, per-device state, plan cache stats, and the
// INGOT_CUDA_SYNC check after each op.
#include "cuda_backend.h"

#include <cstdlib>
#include <string>

#include "cuda_check.h"
#include "kernels.h"
#include "op_matmul.h"
#include "op_qlinear.h"

namespace ingot::cuda {
namespace {

using SupportsFn = bool (*)(const sdk::OpCall&);
using RunFn = void (*)(const sdk::OpCall&, const Launch&);
struct Family {
  SupportsFn supports;
  RunFn run;
};

// The ops the kernels below implement, by family. The family column routes an op appended to the
// op table later to its family's kernels, but it runs here only once it is listed: until then
// supports() declines it and core falls back to another backend.
// clang-format off
bool implemented(int32_t op) {
  switch (op) {
    // ELEMENTWISE_UNARY (k_elementwise.cu)
    case INGOT_OP_NEG: case INGOT_OP_ABS: case INGOT_OP_EXP: case INGOT_OP_LOG: case INGOT_OP_LOG1P:
    case INGOT_OP_SQRT: case INGOT_OP_RSQRT: case INGOT_OP_SIN: case INGOT_OP_COS: case INGOT_OP_TANH:
    case INGOT_OP_SIGMOID: case INGOT_OP_RELU: case INGOT_OP_GELU: case INGOT_OP_ERF: case INGOT_OP_SOFTPLUS:
    case INGOT_OP_SIGN: case INGOT_OP_FLOOR: case INGOT_OP_CEIL: case INGOT_OP_ROUND: case INGOT_OP_RECIPROCAL:
    case INGOT_OP_CLAMP: case INGOT_OP_LOGICAL_NOT:
    // ELEMENTWISE_BINARY, COMPARISON, SELECT (k_elementwise.cu)
    case INGOT_OP_ADD: case INGOT_OP_SUB: case INGOT_OP_MUL: case INGOT_OP_DIV: case INGOT_OP_POW:
    case INGOT_OP_MAXIMUM: case INGOT_OP_MINIMUM: case INGOT_OP_RELU_BWD: case INGOT_OP_EQ: case INGOT_OP_NE:
    case INGOT_OP_LT: case INGOT_OP_LE: case INGOT_OP_GT: case INGOT_OP_GE: case INGOT_OP_LOGICAL_AND:
    case INGOT_OP_LOGICAL_OR: case INGOT_OP_WHERE:
    // REDUCTION (k_reduce.cu), MATMUL (op_matmul.cpp), CONV (conv_engine_legacy.cpp), POOL (k_pool.cu)
    case INGOT_OP_SUM: case INGOT_OP_MEAN: case INGOT_OP_MAX: case INGOT_OP_MIN: case INGOT_OP_ARGMAX:
    case INGOT_OP_MATMUL: case INGOT_OP_CONV2D: case INGOT_OP_CONV2D_BWD_DATA: case INGOT_OP_CONV2D_BWD_WEIGHT:
    case INGOT_OP_MAX_POOL2D: case INGOT_OP_MAX_POOL2D_BWD: case INGOT_OP_AVG_POOL2D: case INGOT_OP_AVG_POOL2D_BWD:
    // INDEX (k_index.cu), SORT (k_sort.cu), CREATION and COPY (k_creation.cu)
    case INGOT_OP_CONCAT: case INGOT_OP_PAD: case INGOT_OP_GATHER: case INGOT_OP_INDEX_SELECT:
    case INGOT_OP_SCATTER_ADD: case INGOT_OP_SORT: case INGOT_OP_TOPK: case INGOT_OP_ARANGE: case INGOT_OP_FILL:
    case INGOT_OP_COPY: case INGOT_OP_CAST:
    // SOFTMAX (k_softmax.cu), NORM (k_norm.cu), OPTIMIZER (k_optim.cu), RANDOM (k_rng.cu)
    case INGOT_OP_SOFTMAX: case INGOT_OP_LOG_SOFTMAX: case INGOT_OP_SOFTMAX_BWD: case INGOT_OP_LOG_SOFTMAX_BWD:
    case INGOT_OP_LAYER_NORM: case INGOT_OP_LAYER_NORM_BWD: case INGOT_OP_BATCH_NORM: case INGOT_OP_BATCH_NORM_BWD:
    case INGOT_OP_GLOBAL_NORM: case INGOT_OP_SGD_UPDATE: case INGOT_OP_ADAM_UPDATE: case INGOT_OP_UNIFORM:
    case INGOT_OP_BERNOULLI: case INGOT_OP_NORMAL: case INGOT_OP_DROPOUT:
    // QUANTIZED (k_quant.cu; QLINEAR: op_qlinear.cpp). QCONV2D is declined: it runs on the host.
    case INGOT_OP_QUANTIZE: case INGOT_OP_DEQUANTIZE: case INGOT_OP_QLINEAR:
    // ATTENTION (k_attention.cu)
    case INGOT_OP_SCALED_DOT_PRODUCT_ATTENTION: case INGOT_OP_SCALED_DOT_PRODUCT_ATTENTION_BWD:
      return true;
    default:
      return false;
  }
}
// clang-format on

// The kernels of an op's family (MATMUL, CONV and QLINEAR are routed before this).
Family family_of(int32_t op) {
  switch (ingot_op_family_of(op)) {
    case INGOT_FAMILY_ELEMENTWISE_UNARY:
      return {unary_supports, unary_run};
    case INGOT_FAMILY_ELEMENTWISE_BINARY:
    case INGOT_FAMILY_COMPARISON:
    case INGOT_FAMILY_SELECT:
      return {binary_supports, binary_run};
    case INGOT_FAMILY_CREATION:
    case INGOT_FAMILY_COPY:
      return {creation_supports, creation_run};
    case INGOT_FAMILY_REDUCTION:
      return {reduce_supports, reduce_run};
    case INGOT_FAMILY_SOFTMAX:
      return {softmax_supports, softmax_run};
    case INGOT_FAMILY_NORM:
      return {norm_supports, norm_run};
    case INGOT_FAMILY_POOL:
      return {pool_supports, pool_run};
    case INGOT_FAMILY_INDEX:
      return {index_supports, index_run};
    case INGOT_FAMILY_SORT:
      return {sort_supports, sort_run};
    case INGOT_FAMILY_RANDOM:
      return {rng_supports, rng_run};
    case INGOT_FAMILY_OPTIMIZER:
      return {optim_supports, optim_run};
    case INGOT_FAMILY_QUANTIZED:
      return {quant_supports, quant_run};
    case INGOT_FAMILY_ATTENTION:
      return {attention_supports, attention_run};
    default:
      return {nullptr, nullptr};
  }
}

bool is_conv(int32_t op) { return ingot_op_family_of(op) == INGOT_FAMILY_CONV; }
bool is_matmul(int32_t op) { return ingot_op_family_of(op) == INGOT_FAMILY_MATMUL; }
bool is_qlinear(int32_t op) { return op == INGOT_OP_QLINEAR; }

// Every descriptor on a CUDA device names `device` (core places all tensors of a call on one).
bool on_one_device(const sdk::OpCall& c, int32_t device) {
  for (int i = 0; i < c.n_in; ++i)
    if (c.in[i].device_kind == INGOT_DEVICE_CUDA && c.in[i].device_index != device) return false;
  for (int i = 0; i < c.n_out; ++i)
    if (c.out[i].device_kind == INGOT_DEVICE_CUDA && c.out[i].device_index != device) return false;
  return true;
}

}  // namespace

CudaBackend::CudaBackend(int32_t device_count)
    : count_(device_count),
      states_(std::make_unique<std::atomic<DeviceState*>[]>(static_cast<size_t>(device_count))),
      sync_each_op_(sync_after_each_op(std::getenv("INGOT_CUDA_SYNC"))) {
  for (int32_t i = 0; i < count_; ++i) states_[i].store(nullptr);
}

// Never destroyed while the process runs (plugins are never unloaded); best effort at exit.
CudaBackend::~CudaBackend() {
  for (int32_t i = 0; i < count_; ++i) delete states_[i].load();
}

DeviceState& CudaBackend::device(int32_t index) {
  if (index < 0 || index >= count_)
    throw sdk::Failure(INGOT_ERR_INVALID_ARGUMENT,
                       "cuda: no device " + std::to_string(index) + " (" + std::to_string(count_) + " visible)");
  DeviceState* s = states_[index].load(std::memory_order_acquire);
  if (s == nullptr) {
    std::lock_guard<std::mutex> lock(create_mu_);
    s = states_[index].load(std::memory_order_acquire);
    if (s == nullptr) {
      s = new DeviceState(index);  // sets the device itself while creating the stream
      states_[index].store(s, std::memory_order_release);
    }
  }
  INGOT_CUDA_CHECK(cudaSetDevice(index));
  return *s;
}

bool CudaBackend::supports(const sdk::OpCall& call) {
  const int32_t dev = call.device_index();
  if (!implemented(call.op) || dev < 0 || dev >= count_ || !on_one_device(call, dev)) return false;
  if (is_matmul(call.op)) return matmul_supports(call);
  if (is_qlinear(call.op)) return qlinear_supports(call);
  if (is_conv(call.op)) return device(dev).conv->supports(call);
  const Family f = family_of(call.op);
  return f.supports != nullptr && f.supports(call);
}

void CudaBackend::execute(const sdk::OpCall& call, const ingot_exec_context& ctx) {
  if (!supports(call))
    throw sdk::Failure(INGOT_ERR_UNSUPPORTED, std::string("cuda: this call of ") + op_name(call.op) +
                                                  " is not supported (dtype, layout or device)");
  const int32_t dev = call.device_index();
  DeviceState& state = device(dev);
  last_device_.store(dev, std::memory_order_relaxed);
  const cudaStream_t stream = state.ctx.stream_for(&ctx);
  // Tensors live in blocks of the compute stream: work on a side stream marks them, so a block freed
  // meanwhile is reused only once that work is done.
  if (stream != state.ctx.stream()) record_stream(call, state, stream);
  if (is_matmul(call.op)) {
    matmul_run(call, state.ctx, stream);
  } else if (is_qlinear(call.op)) {
    qlinear_run(call, state.ctx, stream);
  } else if (is_conv(call.op)) {
    state.conv->run(call, stream);
  } else {
    // Scratch for this stream: released at the end of the call, reused only by later work on it.
    StreamMemory scratch(state.ctx.allocator(), stream);
    family_of(call.op).run(call, Launch{stream, &scratch, state.ctx.props().multiProcessorCount, &state.errors});
  }
  if (sync_each_op_) finish_op(call.op, dev, state, stream);
}

void CudaBackend::record_stream(const sdk::OpCall& call, DeviceState& state, cudaStream_t stream) {
  for (int i = 0; i < call.n_in; ++i)
    if (call.in[i].device_kind == INGOT_DEVICE_CUDA && call.in[i].data != nullptr)
      state.ctx.allocator().record_stream(call.in[i].data, stream);
  for (int i = 0; i < call.n_out; ++i)
    if (call.out[i].device_kind == INGOT_DEVICE_CUDA && call.out[i].data != nullptr)
      state.ctx.allocator().record_stream(call.out[i].data, stream);
}

void CudaBackend::finish_op(int32_t op, int32_t dev, DeviceState& state, cudaStream_t stream) {
  const cudaError_t e = cudaStreamSynchronize(stream);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    throw sdk::Failure(INGOT_ERR_RUNTIME, std::string("cuda: ") + op_name(op) + " failed on cuda:" +
                                              std::to_string(dev) + ": " + cudaGetErrorName(e) + ": " +
                                              cudaGetErrorString(e) + " (found right after the op, INGOT_CUDA_SYNC=1)");
  }
  state.errors.check(true);
}

// The sum over the devices in use (each has its own conv engine and plan cache).
void CudaBackend::plan_cache_stats(ingot_plan_cache_stats& stats) {
  for (int32_t i = 0; i < count_; ++i) {
    DeviceState* s = states_[i].load(std::memory_order_acquire);
    if (s == nullptr) continue;
    ingot_plan_cache_stats one{};
    one.struct_size = sizeof(one);
    s->conv->cache_stats(one);
    stats.entries += one.entries;
    stats.capacity = stats.capacity < 0 || one.capacity < 0 ? -1 : stats.capacity + one.capacity;  // -1 = unbounded
    stats.hits += one.hits;
    stats.misses += one.misses;
  }
}

const char* CudaBackend::impl_name(int32_t op) {
  if (is_conv(op)) {
    DeviceState* s = states_[last_device_.load(std::memory_order_relaxed)].load(std::memory_order_acquire);
    return s != nullptr ? s->conv->last_algo() : nullptr;
  }
  if (is_matmul(op)) return "cublasLt";
  if (is_qlinear(op)) return "cublasLt_int8";
  return implemented(op) && family_of(op).run != nullptr ? "cuda_kernels" : nullptr;
}

}  // namespace ingot::cuda
