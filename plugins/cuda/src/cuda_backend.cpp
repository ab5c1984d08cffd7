// CudaBackend, compute side: routing by op family, per-device state, plan cache stats.
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

// The kernels of an op's family (the op table's family column; MATMUL and CONV are routed
// before this). Each family's kernels check the op they get, so an op appended to a family later
// is declined by its supports() until the family implements it.
Family family_of(int32_t op) {
  switch (ingot_op_family_of(op)) {
    case INGOT_FAMILY_ELEMENTWISE_UNARY: return {unary_supports, unary_run};
    case INGOT_FAMILY_ELEMENTWISE_BINARY:
    case INGOT_FAMILY_COMPARISON:
    case INGOT_FAMILY_SELECT: return {binary_supports, binary_run};
    case INGOT_FAMILY_CREATION:
    case INGOT_FAMILY_COPY: return {creation_supports, creation_run};
    case INGOT_FAMILY_REDUCTION: return {reduce_supports, reduce_run};
    case INGOT_FAMILY_SOFTMAX: return {softmax_supports, softmax_run};
    case INGOT_FAMILY_NORM: return {norm_supports, norm_run};
    case INGOT_FAMILY_POOL: return {pool_supports, pool_run};
    case INGOT_FAMILY_INDEX: return {index_supports, index_run};
    case INGOT_FAMILY_SORT: return {sort_supports, sort_run};
    case INGOT_FAMILY_RANDOM: return {rng_supports, rng_run};
    case INGOT_FAMILY_OPTIMIZER: return {optim_supports, optim_run};
    default: return {nullptr, nullptr};
  }
}

bool is_conv(int32_t op) { return ingot_op_family_of(op) == INGOT_FAMILY_CONV; }
bool is_matmul(int32_t op) { return ingot_op_family_of(op) == INGOT_FAMILY_MATMUL; }

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
    : count_(device_count), states_(std::make_unique<std::atomic<DeviceState*>[]>(static_cast<size_t>(device_count))) {
  for (int32_t i = 0; i < count_; ++i) states_[i].store(nullptr);
}

// Never destroyed while the process runs (plugins are never unloaded); best effort at exit.
CudaBackend::~CudaBackend() {
  for (int32_t i = 0; i < count_; ++i) delete states_[i].load();
}

DeviceState& CudaBackend::device(int32_t index) {
  if (index < 0 || index >= count_)
    throw sdk::Failure(INGOT_ERR_INVALID_ARGUMENT, "cuda: no device " + std::to_string(index) + " (" +
                                                       std::to_string(count_) + " visible)");
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
  if (dev < 0 || dev >= count_ || !on_one_device(call, dev)) return false;
  if (is_matmul(call.op)) return matmul_supports(call);
  if (is_conv(call.op)) return device(dev).conv->supports(call);
  const Family f = family_of(call.op);
  return f.supports != nullptr && f.supports(call);
}

void CudaBackend::execute(const sdk::OpCall& call, const ingot_exec_context& ctx) {
  if (!supports(call))
    throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "cuda: this call of op " + std::to_string(call.op) +
                                                  " is not supported (dtype, layout or device)");
  const int32_t dev = call.device_index();
  DeviceState& state = device(dev);
  last_device_.store(dev, std::memory_order_relaxed);
  const cudaStream_t stream = state.ctx.stream_for(&ctx);
  if (is_matmul(call.op)) return matmul_run(call, state.ctx, stream);
  if (is_conv(call.op)) return state.conv->run(call, stream);
  family_of(call.op).run(call, Launch{stream, &state.ctx.allocator(), state.ctx.props().multiProcessorCount});
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
  return family_of(op).run != nullptr ? "cuda_kernels" : nullptr;
}

}  // namespace ingot::cuda
