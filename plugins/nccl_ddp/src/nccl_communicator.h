// NcclCommunicator: one rank's "nccl" communicator, an ncclComm_t on one GPU, created
// non-blocking and bootstrapped over the host's key-value store; collectives are queued on the
// stream the caller names, or run synchronously when it names none.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <string>

#include "ingot/plugin/sdk.h"
#include "nccl_library.h"

namespace ingot::nccl {

/// The store key under which rank 0 publishes the group's ncclUniqueId.
inline constexpr const char* kUniqueIdKey = "nccl_ddp/unique_id";

class NcclCommunicator final : public sdk::CommunicatorImpl {
 public:
  /// Joins rank init.rank of init.world_size on CUDA device init.device_index; blocks until the
  /// group is formed, INGOT_COMM_TIMEOUT_S at most (then INGOT_ERR_TIMEOUT).
  explicit NcclCommunicator(const sdk::CommunicatorInit& init);
  /// Finalizes and destroys the communicator (aborts it after an error or when finalizing times out).
  ~NcclCommunicator() override;
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  void all_reduce(const ingot_tensor_desc& in, const ingot_tensor_desc& out, int32_t op, void* stream) override;
  void broadcast(const ingot_tensor_desc& in, const ingot_tensor_desc& out, int32_t root, void* stream) override;
  void all_gather(const ingot_tensor_desc& in, const ingot_tensor_desc& out, void* stream) override;
  void reduce_scatter(const ingot_tensor_desc& in, const ingot_tensor_desc& out, int32_t op, void* stream) override;
  /// A one-element all_reduce, then waits (with the timeout) until the stream has run it.
  void barrier(void* stream) override;
  void send(const ingot_tensor_desc& in, int32_t peer, void* stream) override;
  void recv(const ingot_tensor_desc& out, int32_t peer, void* stream) override;

 private:
  /// Queues `enqueue(stream)` on `stream`, or (NULL) waits for all work on the device, runs it on
  /// the communicator's own stream and waits for that, so the call is synchronous.
  template <class Enqueue>
  void run(const char* what, void* stream, Enqueue&& enqueue);
  /// Accepts NCCL's answer to `call`: in progress (non-blocking mode) is waited for; an error
  /// aborts the communicator and throws.
  void settle(ncclResult_t r, const char* call);
  /// Waits until `stream` has run its work, watching the communicator's asynchronous error.
  void wait_stream(cudaStream_t stream, const char* what);
  /// Aborts the communicator and throws INGOT_ERR_TIMEOUT naming `what`.
  [[noreturn]] void time_out(const char* what);
  /// Aborts the communicator (after an NCCL error) and throws `r`'s failure.
  [[noreturn]] void fail_async(ncclResult_t r, const char* what);
  void check_usable(const char* what) const;
  void check_tensor(const ingot_tensor_desc& d, const char* what) const;
  void check_peer(int32_t peer, const char* what) const;
  std::string where() const;
  void release() noexcept;

  const NcclLibrary* lib_;
  int32_t rank_;
  int32_t world_;
  int32_t device_;
  std::chrono::milliseconds timeout_;
  ncclComm_t comm_ = nullptr;
  cudaStream_t own_stream_ = nullptr;  // for calls that name no stream
  float* scratch_ = nullptr;           // the barrier's one element, on the device
  std::string broken_;                 // why the communicator was aborted ("" while usable)
};

}  // namespace ingot::nccl
