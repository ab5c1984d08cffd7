// GlooCommunicator: one rank of a gloo group over TCP (CPU tensors). Bootstraps through the host's
// key-value store, then runs every collective with gloo's algorithms and point-to-point sends
// with its unbound buffers.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "ingot/plugin/sdk.h"
#include "send_queue.h"

namespace gloo {
class Context;
}
namespace gloo::transport {
class Device;
}

namespace ingot::gloo_ddp {

class GlooCommunicator final : public ingot::sdk::CommunicatorImpl {
 public:
  /// Joins the group: opens a TCP device (tcp_device.h) and connects to every other rank, the
  /// addresses exchanged under "gloo/<n>/" in the store (n counts this rank's gloo groups, so
  /// every rank must create its groups in the same order). Waits up to INGOT_COMM_TIMEOUT_S.
  explicit GlooCommunicator(const ingot::sdk::CommunicatorInit& init);
  ~GlooCommunicator() override;

  void all_reduce(const ingot_tensor_desc& in, const ingot_tensor_desc& out, int32_t op, void* stream) override;
  void broadcast(const ingot_tensor_desc& in, const ingot_tensor_desc& out, int32_t root, void* stream) override;
  void all_gather(const ingot_tensor_desc& in, const ingot_tensor_desc& out, void* stream) override;
  void reduce_scatter(const ingot_tensor_desc& in, const ingot_tensor_desc& out, int32_t op, void* stream) override;
  void barrier(void* stream) override;
  /// Returns once the data is copied and posted; delivery completes in the background.
  void send(const ingot_tensor_desc& in, int32_t peer, void* stream) override;
  void recv(const ingot_tensor_desc& out, int32_t peer, void* stream) override;

 private:
  /// Reduces `n` elements of `dtype` at `data` over the group, in place.
  void reduce_in_place(const char* what, void* data, size_t n, int32_t dtype, int32_t op);
  /// Runs fn for collective `what` with gloo's errors translated, after reporting a failed send.
  template <class Fn>
  void run(const std::string& what, Fn&& fn);
  uint32_t next_tag() { return tag_++; }

  int32_t rank_;
  int32_t world_;
  std::chrono::milliseconds timeout_;
  std::shared_ptr<gloo::transport::Device> device_;
  std::shared_ptr<gloo::Context> context_;
  std::unique_ptr<SendQueue> sends_;  // after context_: stopped before the context closes
  uint32_t tag_ = 0;
  std::map<int32_t, uint64_t> sent_, received_;  // point-to-point sequence numbers per peer
};

/// INGOT_COMM_TIMEOUT_S (seconds, default 300) as milliseconds; throws sdk::Failure for a value
/// that is not a positive number.
std::chrono::milliseconds comm_timeout();

}  // namespace ingot::gloo_ddp
