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

bool ProcessGroup::any(bool flag) const {
  const Tensor t = full(Shape{1}, flag ? 1.0 : 0.0, DType::I32, comm_->device());
  comm_->all_reduce(t, ReduceOp::Max);
  return t.to(Device::cpu()).item() != 0.0;
}

}  // namespace ingot::parallel
