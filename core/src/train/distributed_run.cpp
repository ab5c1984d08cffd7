// join_distributed_run: launch variables + `parallel:` -> a ProcessGroup on the right device.
#include "ingot/train/distributed_run.h"

#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <ostream>
#include <thread>

#include "ingot/base/error.h"
#include "ingot/parallel/dist_env.h"
#include "ingot/runtime/communicator_registry.h"
#include "ingot/runtime/plugin_loader.h"

namespace ingot::train {

std::unique_ptr<parallel::ProcessGroup> join_distributed_run(const config::Config& cfg,
                                                             const parallel::ParallelConfig& parallel, Device& device,
                                                             std::ostream& out) {
  const std::optional<parallel::DistEnv> env = parallel::dist_env_from_environment();
  // (A launched world of one with parallel: still forms its group: the same code path, on one rank.)
  if (!env || (env->world_size == 1 && !parallel.enabled())) {
    if (parallel.enabled())
      out << fmt::format("parallel: mode {} with one process: training here alone (start several with `ingot launch "
                         "--nproc-per-node N run {}`)\n",
                         parallel.mode, cfg.file());
    return nullptr;
  }
  INGOT_CHECK_AS(parallel.enabled(), ConfigError,
                 "{}: started as rank {} of {} ({}) but the config has no parallel: section, so every rank would "
                 "train alone and write the same run folder: add `parallel: {{mode: ddp}}`",
                 cfg.file(), env->rank, env->world_size, env->source);
  if (device.kind == DeviceKind::CUDA) device.index = env->local_rank;
  const std::string name = parallel::communicator_name(parallel, device.kind == DeviceKind::CUDA);
  PluginLoader::instance().load_all();
  if (CommunicatorRegistry::instance().find(name) == nullptr)
    throw BackendMissingError(fmt::format(
        "{}: parallel.backend {} needs the communicator '{}', which no loaded plugin offers (see `ingot plugins "
        "--verbose`; gloo_ddp serves cpu, nccl_ddp cuda)",
        cfg.where("parallel"), parallel.backend, name));
  auto group = std::make_unique<parallel::ProcessGroup>(*env, name, device, parallel.timeout_s);
  out << fmt::format("parallel: {} as rank {} of {} ({}), communicator {} on {}, rank 0 at {}:{}\n", parallel.mode,
                     env->rank, env->world_size, env->source, name, device.str(), env->master_addr, env->master_port);
  return group;
}

namespace {

/// A failure that comes from the other ranks (a collective or the store lost a peer), not from
/// this rank's own work.
bool caused_by_a_peer(const std::exception& e) {
  if (dynamic_cast<const PluginError*>(&e) != nullptr || dynamic_cast<const TimeoutError*>(&e) != nullptr)
    return std::strstr(e.what(), "communicator ") != nullptr || std::strstr(e.what(), "key-value store") != nullptr;
  return std::strncmp(e.what(), "key-value store", 15) == 0;
}

}  // namespace

int run_as_rank(parallel::ProcessGroup* group, const std::function<int()>& body) {
  if (group == nullptr) return body();
  try {
    return body();
  } catch (const std::exception& e) {
    if (!caused_by_a_peer(e)) {
      group->report_failure(e.what());
      throw;
    }
    const std::string peer = group->failed_peer();
    if (peer.empty()) throw;
    // The rank that failed first exits first, so a launcher names it rather than this one (rank 0
    // waits for the store's clients to leave before it exits).
    group->leave();
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    throw Error(fmt::format("stopped with the other ranks: {}", peer));
  }
}

void check_stages_for_distributed(const std::vector<std::unique_ptr<PipelineStage>>& stages, const std::string& file) {
  for (const auto& st : stages)
    INGOT_CHECK_AS(st->runs_distributed(), ConfigError,
                   "{}: stage '{}' runs on one process only: train with parallel: here, then run it in a config of "
                   "its own (init_from: runs/<name>/model.safetensors) without parallel:",
                   file, st->name());
}

}  // namespace ingot::train
