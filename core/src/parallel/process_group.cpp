// ProcessGroup: store first (rank 0 serves it), then the communicator over it.
#include "ingot/parallel/process_group.h"

#include <chrono>

#include "ingot/ops/creation.h"

namespace ingot::parallel {

ProcessGroup::ProcessGroup(const DistEnv& env, const std::string& communicator, Device device, double timeout_s)
    : env_(env), timeout_s_(timeout_s) {
  const auto timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  store_ = std::make_unique<TcpKvStore>(env.master_addr, env.master_port, env.rank == 0, timeout);
  comm_ = std::make_unique<Communicator>(communicator, env.rank, env.world_size, *store_, device);
}

ProcessGroup::~ProcessGroup() {
  comm_.reset();
  store_.reset();
}

void ProcessGroup::finish() {
  comm_->barrier();
  store_->linger(std::chrono::milliseconds(static_cast<int64_t>(timeout_s_ * 1000)));
}

void ProcessGroup::report_failure(const std::string& what) noexcept {
  try {
    store_->set("ingot/failed/" + std::to_string(env_.rank), what);
  } catch (...) {  // the store is gone (rank 0 stopped): nobody to tell
  }
}

std::string ProcessGroup::failed_peer() noexcept {
  try {
    for (int r = 0; r < env_.world_size; ++r) {
      if (r == env_.rank) continue;
      if (const auto what = store_->try_get("ingot/failed/" + std::to_string(r)))
        return "rank " + std::to_string(r) + ": " + *what;
    }
    return "";
  } catch (...) {
    return env_.rank == 0 ? "" : "rank 0 stopped (it serves the key-value store; see its error)";
  }
}

void ProcessGroup::leave() noexcept {
  comm_.reset();
  if (env_.rank != 0) store_.reset();
}

bool ProcessGroup::any(bool flag) const {
  const Tensor t = full(Shape{1}, flag ? 1.0 : 0.0, DType::I32, comm_->device());
  comm_->all_reduce(t, ReduceOp::Max);
  return t.to(Device::cpu()).item() != 0.0;
}

}  // namespace ingot::parallel
