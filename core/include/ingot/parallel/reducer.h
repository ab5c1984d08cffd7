// Reducer: the gradient all-reduce of data-parallel training (torch DDP's Reducer). Parameters
// are grouped into buckets in reverse registration order (roughly the order backward produces
// their gradients), the first bucket small (1 MB) so communication starts early, the others up to
// bucket_mb. A post-accumulate-grad hook on each parameter marks it ready; once a bucket is
// complete its gradients are copied into one flat buffer and averaged across ranks on a
// communication thread while backward goes on with the next layers. finalize() waits for every
// bucket and writes the averaged gradients back.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "ingot/runtime/communicator.h"
#include "ingot/tensor/tensor.h"

namespace ingot::parallel {

struct ReducerOptions {
  double bucket_mb = 25.0;             ///< bucket size cap (torch's bucket_cap_mb)
  double first_bucket_mb = 1.0;        ///< the first (last layers') bucket
  bool find_unused_parameters = false;  ///< reduce a zero gradient for parameters backward did not reach
  /// Reduce on a thread of its own while backward runs (host communicators); false: in finalize.
  bool overlap = true;
};

/// One bucket: parameters (indices into the reducer's list) and their place in the flat buffer.
struct Bucket {
  std::vector<size_t> params;
  std::vector<int64_t> offsets;
  Tensor buffer;  ///< 1-D, the parameters' dtype and device
  size_t pending = 0;
  bool launched = false;
  bool done = false;
};

class Reducer {
 public:
  /// Registers hooks on every parameter that requires grad; buckets hold parameters of one
  /// dtype. `comm` must outlive the reducer.
  Reducer(std::vector<std::pair<std::string, Tensor>> named_params, const Communicator& comm, ReducerOptions options);
  ~Reducer();
  Reducer(const Reducer&) = delete;
  Reducer& operator=(const Reducer&) = delete;

  /// Announces a backward pass: with `sync` its gradients are reduced (the last micro-batch of an
  /// optimizer step); without, hooks do nothing and gradients accumulate locally (no_sync).
  void prepare_for_backward(bool sync);
  /// After a synchronised backward: reduces what is left (a zero gradient for unused parameters
  /// with find_unused_parameters; otherwise an error naming them), waits for every bucket and
  /// sets each parameter's gradient to the average over ranks. Does nothing after a no_sync pass.
  void finalize();
  /// Whether `named_params` are the tensors this reducer hooked (a stage may replace the model).
  bool watches(const std::vector<std::pair<std::string, Tensor>>& named_params) const;

  const std::vector<Bucket>& buckets() const { return buckets_; }
  const std::string& param_name(size_t i) const { return names_[i]; }
  /// Buckets reduced so far, and how many of them were launched before finalize (overlapped).
  int64_t reductions() const { return reductions_; }
  int64_t reductions_during_backward() const { return early_; }

 private:
  void mark_ready(size_t param);
  void fill_and_launch(size_t bucket);
  void launch_in_order();
  void comm_loop();

  std::vector<std::string> names_;
  std::vector<Tensor> params_;
  std::vector<uint64_t> hook_ids_;
  std::vector<size_t> bucket_of_;
  std::vector<bool> ready_;
  std::vector<Bucket> buckets_;
  const Communicator& comm_;
  ReducerOptions options_;
  bool sync_ = false;
  bool in_backward_ = false;
  size_t next_launch_ = 0;
  int64_t reductions_ = 0;
  int64_t early_ = 0;

  // The communication thread and its queue of bucket indices.
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<size_t> queue_;
  size_t finished_ = 0;
  bool stopping_ = false;
  std::exception_ptr failure_;
};

}  // namespace ingot::parallel
