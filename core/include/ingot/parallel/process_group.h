// ProcessGroup: this process's membership of a distributed run — where it stands (DistEnv), the
// key-value store rank 0 serves, and the communicator the run's collectives go through.
#pragma once

#include <memory>
#include <string>

#include "ingot/parallel/dist_env.h"
#include "ingot/parallel/tcp_kv_store.h"
#include "ingot/runtime/communicator.h"

namespace ingot::parallel {

class ProcessGroup {
 public:
  /// Joins the group `env` describes through the communicator named `communicator` (a plugin's)
  /// for tensors on `device`, waiting up to `timeout_s` for the other ranks. Throws an error
  /// naming the communicator (BackendMissingError lists the registered ones) or the address.
  ProcessGroup(const DistEnv& env, const std::string& communicator, Device device, double timeout_s);
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const { return env_.rank; }
  int world_size() const { return env_.world_size; }
  const DistEnv& env() const { return env_; }
  const Communicator& comm() const { return *comm_; }
  KvStore& store() { return *store_; }
  /// True for rank 0, the rank that writes the run's files.
  bool writes_files() const { return env_.rank == 0; }
  /// Waits for every rank at the end of a run that went well (rank 0 serves the store, so it
  /// leaves last). A rank leaving on an error skips it: its peers see it gone and stop too.
  void finish();
  /// Leaves word in the store that this rank stops on `what` (best effort: the store may be gone).
  void report_failure(const std::string& what) noexcept;
  /// "rank R: <its message>" for the first other rank that reported a failure; a line naming
  /// rank 0 when the store it serves is gone; empty when no other rank reported one.
  std::string failed_peer() noexcept;
  /// Closes the communicator and this rank's connection to the store now (a rank on its way out
  /// after a peer failed: rank 0, waiting for every client to leave, may then exit first).
  void leave() noexcept;
  /// True when any rank passes true (an all-reduce of one flag): ranks decide together to stop.
  bool any(bool flag) const;

 private:
  DistEnv env_;
  double timeout_s_;
  std::unique_ptr<TcpKvStore> store_;
  std::unique_ptr<Communicator> comm_;
};

}  // namespace ingot::parallel
