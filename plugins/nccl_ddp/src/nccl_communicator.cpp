// NcclCommunicator: bootstrap (rank 0's unique id through the store), non-blocking init polled
// under the timeout, one NCCL call per collective on the caller's stream, and teardown.
#include "nccl_communicator.h"

#include <cstdlib>
#include <cstring>

#include "checks.h"
#include "comm_timeout.h"
#include "nccl_types.h"

namespace ingot::nccl {

namespace {

using sdk::Failure;

// Makes `device` current for one call and restores the caller's device: the thread may be
// serving another GPU through the cuda backend. A quiet guard (for teardown) never throws.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device, bool quiet = false) {
    if (cudaGetDevice(&previous_) != cudaSuccess || previous_ == device) {
      previous_ = -1;
      return;
    }
    const cudaError_t e = cudaSetDevice(device);
    if (!quiet) INGOT_NCCL_CUDA_CHECK(e);
  }
  ~DeviceGuard() {
    if (previous_ >= 0) (void)cudaSetDevice(previous_);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

size_t count_of(const ingot_tensor_desc& d) { return static_cast<size_t>(sdk::numel(d)); }

}  // namespace

NcclCommunicator::NcclCommunicator(const sdk::CommunicatorInit& init)
    : lib_(&NcclLibrary::instance()),
      rank_(init.rank),
      world_(init.world_size),
      device_(init.device_index),
      timeout_(comm_timeout(std::getenv("INGOT_COMM_TIMEOUT_S"))) {
  if (init.device_kind != INGOT_DEVICE_CUDA)
    throw Failure(INGOT_ERR_UNSUPPORTED, "nccl_ddp: the nccl communicator exchanges CUDA tensors only");
  int count = 0;
  INGOT_NCCL_CUDA_CHECK(cudaGetDeviceCount(&count));
  if (device_ < 0 || device_ >= count)
    throw Failure(INGOT_ERR_INVALID_ARGUMENT,
                  "nccl_ddp: no CUDA device " + std::to_string(device_) + " (" + std::to_string(count) + " visible)");
  DeviceGuard guard(device_);
  try {
    ncclUniqueId id{};
    if (rank_ == 0) {
      const ncclResult_t r = lib_->ncclGetUniqueId(&id);
      if (r != ncclSuccess) fail_nccl(*lib_, r, nullptr, "ncclGetUniqueId");
      init.store.set(kUniqueIdKey, &id, sizeof(id));
    } else {
      const std::string value = init.store.get(kUniqueIdKey, timeout_.count());
      if (value.size() != sizeof(id))
        throw Failure(INGOT_ERR_INVALID_ARGUMENT, "nccl_ddp: " + where() + ": the store's " + kUniqueIdKey + " has " +
                                                      std::to_string(value.size()) + " bytes, not " +
                                                      std::to_string(sizeof(id)) + " (one store per group)");
      std::memcpy(&id, value.data(), sizeof(id));
    }
    // Non-blocking: init returns at once (ncclInProgress) and settle() polls it under the timeout,
    // so a rank that never joins ends in INGOT_ERR_TIMEOUT instead of a hang.
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    const ncclResult_t r = lib_->ncclCommInitRankConfig(&comm_, world_, id, rank_, &config);
    if (comm_ == nullptr) fail_nccl(*lib_, r == ncclSuccess ? ncclInternalError : r, nullptr, "ncclCommInitRankConfig");
    settle(r, "ncclCommInitRankConfig");
    INGOT_NCCL_CUDA_CHECK(cudaStreamCreateWithFlags(&own_stream_, cudaStreamNonBlocking));
    INGOT_NCCL_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&scratch_), sizeof(float)));
    INGOT_NCCL_CUDA_CHECK(cudaMemset(scratch_, 0, sizeof(float)));
  } catch (...) {
    if (comm_ != nullptr) (void)lib_->ncclCommAbort(comm_);
    comm_ = nullptr;
    release();
    throw;
  }
}

NcclCommunicator::~NcclCommunicator() {
  DeviceGuard guard(device_, /*quiet=*/true);
  if (comm_ != nullptr) {
    // Finalize flushes what is still queued; a broken communicator, or one whose peers do not
    // finalize within the timeout, is aborted instead (that also ends kernels waiting for them).
    ncclResult_t r = broken_.empty() ? lib_->ncclCommFinalize(comm_) : ncclInternalError;
    if (r == ncclInProgress) {
      ncclResult_t state = ncclInProgress;
      const bool done = poll_until(
          [&] {
            if (lib_->ncclCommGetAsyncError(comm_, &state) != ncclSuccess) state = ncclInternalError;
            return state != ncclInProgress;
          },
          timeout_);
      r = done ? state : ncclInProgress;
    }
    (void)(r == ncclSuccess ? lib_->ncclCommDestroy(comm_) : lib_->ncclCommAbort(comm_));
    comm_ = nullptr;
  }
  release();
}

void NcclCommunicator::release() noexcept {
  if (scratch_ != nullptr) (void)cudaFree(scratch_);
  if (own_stream_ != nullptr) (void)cudaStreamDestroy(own_stream_);
  scratch_ = nullptr;
  own_stream_ = nullptr;
  (void)cudaGetLastError();
}

std::string NcclCommunicator::where() const {
  return "rank " + std::to_string(rank_) + " of " + std::to_string(world_) + " on cuda:" + std::to_string(device_);
}

void NcclCommunicator::check_usable(const char* what) const {
  if (!broken_.empty())
    throw Failure(INGOT_ERR_RUNTIME, std::string("nccl_ddp: ") + what + ": " + where() +
                                         ": the communicator was aborted after an earlier failure (" + broken_ +
                                         "); create a new one");
}

void NcclCommunicator::check_tensor(const ingot_tensor_desc& d, const char* what) const {
  if (d.device_kind != INGOT_DEVICE_CUDA || d.device_index != device_)
    throw Failure(INGOT_ERR_INVALID_ARGUMENT, std::string("nccl_ddp: ") + what + ": " + where() +
                                                  ": a tensor on device kind " + std::to_string(d.device_kind) +
                                                  " index " + std::to_string(d.device_index));
  (void)nccl_dtype(d.dtype);  // refuses the dtypes NCCL has no type for
}

void NcclCommunicator::check_peer(int32_t peer, const char* what) const {
  if (peer < 0 || peer >= world_ || peer == rank_)
    throw Failure(INGOT_ERR_INVALID_ARGUMENT, std::string("nccl_ddp: ") + what + ": " + where() + ": peer " +
                                                  std::to_string(peer) + " is not another rank");
}

void NcclCommunicator::time_out(const char* what) {
  broken_ = std::string(what) + " timed out";
  (void)lib_->ncclCommAbort(comm_);
  comm_ = nullptr;
  throw Failure(INGOT_ERR_TIMEOUT, std::string("nccl_ddp: ") + what + ": " + where() + ": no progress within " +
                                       seconds_text(timeout_) +
                                       " (a rank died, stopped, or calls collectives in another order?); "
                                       "the communicator is aborted; INGOT_COMM_TIMEOUT_S sets the limit");
}

void NcclCommunicator::fail_async(ncclResult_t r, const char* what) {
  const std::string text = nccl_failure_text(*lib_, r, comm_, what);
  broken_ = text;
  (void)lib_->ncclCommAbort(comm_);
  comm_ = nullptr;
  throw Failure(nccl_error_code(r), "nccl_ddp: " + where() + ": " + text + "; the communicator is aborted");
}

void NcclCommunicator::settle(ncclResult_t r, const char* call) {
  if (r == ncclSuccess) return;
  // NCCL's rule: after an error the communicator may be inconsistent across ranks; abort it.
  if (r != ncclInProgress) fail_async(r, call);
  ncclResult_t state = ncclInProgress;
  const bool done = poll_until(
      [&] {
        const ncclResult_t q = lib_->ncclCommGetAsyncError(comm_, &state);
        if (q != ncclSuccess) state = q;
        return state != ncclInProgress;
      },
      timeout_);
  if (!done) time_out(call);
  if (state != ncclSuccess) fail_async(state, call);
}

void NcclCommunicator::wait_stream(cudaStream_t stream, const char* what) {
  const bool done = poll_until(
      [&] {
        const cudaError_t e = cudaStreamQuery(stream);
        if (e == cudaSuccess) return true;
        if (e != cudaErrorNotReady) INGOT_NCCL_CUDA_CHECK(e);
        ncclResult_t state = ncclSuccess;
        (void)lib_->ncclCommGetAsyncError(comm_, &state);
        if (state != ncclSuccess && state != ncclInProgress) fail_async(state, what);
        return false;
      },
      timeout_);
  if (!done) time_out(what);
}

template <class Enqueue>
void NcclCommunicator::run(const char* what, void* stream, Enqueue&& enqueue) {
  check_usable(what);
  DeviceGuard guard(device_);
  if (stream != nullptr) {
    enqueue(static_cast<cudaStream_t>(stream));
    return;
  }
  // No stream named: this plugin cannot see the backend's compute stream, so it orders the call
  // after everything queued on the device and returns once it is done.
  INGOT_NCCL_CUDA_CHECK(cudaDeviceSynchronize());
  enqueue(own_stream_);
  wait_stream(own_stream_, what);
}

void NcclCommunicator::all_reduce(const ingot_tensor_desc& in, const ingot_tensor_desc& out, int32_t op, void* stream) {
  check_tensor(in, "all_reduce"), check_tensor(out, "all_reduce");
  const ncclRedOp_t red = nccl_reduce_op(op);
  run("all_reduce", stream, [&](cudaStream_t s) {
    settle(
        lib_->ncclAllReduce(sdk::data_ptr(in), sdk::data_ptr(out), count_of(out), nccl_dtype(in.dtype), red, comm_, s),
        "ncclAllReduce");
  });
}

void NcclCommunicator::broadcast(const ingot_tensor_desc& in, const ingot_tensor_desc& out, int32_t root,
                                 void* stream) {
  check_tensor(in, "broadcast"), check_tensor(out, "broadcast");
  if (root < 0 || root >= world_)
    throw Failure(INGOT_ERR_INVALID_ARGUMENT, "nccl_ddp: broadcast: root " + std::to_string(root) + " is not a rank");
  run("broadcast", stream, [&](cudaStream_t s) {
    settle(
        lib_->ncclBroadcast(sdk::data_ptr(in), sdk::data_ptr(out), count_of(out), nccl_dtype(in.dtype), root, comm_, s),
        "ncclBroadcast");
  });
}

void NcclCommunicator::all_gather(const ingot_tensor_desc& in, const ingot_tensor_desc& out, void* stream) {
  check_tensor(in, "all_gather"), check_tensor(out, "all_gather");
  run("all_gather", stream, [&](cudaStream_t s) {
    settle(lib_->ncclAllGather(sdk::data_ptr(in), sdk::data_ptr(out), count_of(in), nccl_dtype(in.dtype), comm_, s),
           "ncclAllGather");
  });
}

void NcclCommunicator::reduce_scatter(const ingot_tensor_desc& in, const ingot_tensor_desc& out, int32_t op,
                                      void* stream) {
  check_tensor(in, "reduce_scatter"), check_tensor(out, "reduce_scatter");
  const ncclRedOp_t red = nccl_reduce_op(op);
  run("reduce_scatter", stream, [&](cudaStream_t s) {
    settle(lib_->ncclReduceScatter(sdk::data_ptr(in), sdk::data_ptr(out), count_of(out), nccl_dtype(in.dtype), red,
                                   comm_, s),
           "ncclReduceScatter");
  });
}

void NcclCommunicator::barrier(void* stream) {
  check_usable("barrier");
  DeviceGuard guard(device_);
  const cudaStream_t s = stream != nullptr ? static_cast<cudaStream_t>(stream) : own_stream_;
  settle(lib_->ncclAllReduce(scratch_, scratch_, 1, ncclFloat32, ncclSum, comm_, s), "ncclAllReduce (barrier)");
  wait_stream(s, "barrier");
}

void NcclCommunicator::send(const ingot_tensor_desc& in, int32_t peer, void* stream) {
  check_tensor(in, "send");
  check_peer(peer, "send");
  run("send", stream, [&](cudaStream_t s) {
    settle(lib_->ncclSend(sdk::data_ptr(in), count_of(in), nccl_dtype(in.dtype), peer, comm_, s), "ncclSend");
  });
}

void NcclCommunicator::recv(const ingot_tensor_desc& out, int32_t peer, void* stream) {
  check_tensor(out, "recv");
  check_peer(peer, "recv");
  run("recv", stream, [&](cudaStream_t s) {
    settle(lib_->ncclRecv(sdk::data_ptr(out), count_of(out), nccl_dtype(out.dtype), peer, comm_, s), "ncclRecv");
  });
}

}  // namespace ingot::nccl
