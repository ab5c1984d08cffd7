// Communicator: core's handle on one rank of a communicator group, created through a plugin's
// communicator component. Checks tensors before each collective and turns status objects into
// PluginError naming the communicator, the rank and the collective (as Backend does for ops).
#pragma once

#include <string>

#include "ingot/plugin/ingot_plugin.h"
#include "ingot/tensor/tensor.h"

namespace ingot {

class KvStore;
struct CommunicatorComponent;

/// The reduction of all_reduce and reduce_scatter.
enum class ReduceOp : int32_t {
  Sum = INGOT_REDUCE_SUM,
  Avg = INGOT_REDUCE_AVG,  ///< sum / world_size
  Max = INGOT_REDUCE_MAX,
  Min = INGOT_REDUCE_MIN
};

class Communicator {
 public:
  /// Joins rank `rank` of `world_size` through `component`, bootstrapping over `store` (shared by
  /// the group; it must outlive the communicator), for tensors on `device`. Blocks until the
  /// group is formed; throws PluginError when the plugin fails.
  Communicator(const CommunicatorComponent& component, int rank, int world_size, KvStore& store,
               Device device = Device::cpu());
  /// Joins through the registered communicator component named `name` (e.g. "nccl").
  Communicator(const std::string& name, int rank, int world_size, KvStore& store, Device device = Device::cpu());
  ~Communicator();
  Communicator(Communicator&& other) noexcept;
  Communicator& operator=(Communicator&& other) noexcept;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const { return rank_; }
  int world_size() const { return world_size_; }
  Device device() const { return device_; }
  const std::string& name() const;
  /// The native stream collectives are ordered on: by default the device backend's compute stream
  /// (native_stream), so they queue in order with its ops; NULL lets the plugin choose.
  void set_stream(void* stream) { stream_ = stream; }

  /// output = reduce(input of every rank); same shape and dtype (output may be input).
  void all_reduce(const Tensor& input, const Tensor& output, ReduceOp op = ReduceOp::Sum) const;
  void all_reduce(const Tensor& tensor, ReduceOp op = ReduceOp::Sum) const { all_reduce(tensor, tensor, op); }
  /// output = input of rank `root`; same shape and dtype (output may be input).
  void broadcast(const Tensor& input, const Tensor& output, int root) const;
  void broadcast(const Tensor& tensor, int root) const { broadcast(tensor, tensor, root); }
  /// output (world_size x input's elements) = the inputs of ranks 0, 1, ... one after the other.
  void all_gather(const Tensor& input, const Tensor& output) const;
  /// input holds world_size chunks of output's size; rank r gets the reduction of every chunk r.
  void reduce_scatter(const Tensor& input, const Tensor& output, ReduceOp op = ReduceOp::Sum) const;
  /// Returns once every rank has called barrier.
  void barrier() const;
  /// Point to point: gives `input` to rank `peer`, which receives it with recv into a tensor of
  /// the same size and dtype. Messages between two ranks arrive in the order sent. Throws
  /// PluginError when the communicator's plugin predates ABI 2.3 or cannot send.
  void send(const Tensor& input, int peer) const;
  void recv(const Tensor& output, int peer) const;
  /// Whether the plugin offers send / recv.
  bool can_send() const;

 private:
  void check(const char* what, const Tensor& t) const;
  std::string where(const char* what) const;

  const CommunicatorComponent* component_ = nullptr;
  void* handle_ = nullptr;
  int rank_ = 0;
  int world_size_ = 0;
  Device device_;
  void* stream_ = nullptr;
};

}  // namespace ingot
