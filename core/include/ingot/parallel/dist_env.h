// DistEnv: where this process stands in a distributed run, read from the environment that
// `ingot launch`, torchrun, Slurm or mpirun set (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,
// MASTER_ADDR, MASTER_PORT).
#pragma once

#include <optional>
#include <string>

namespace ingot::parallel {

struct DistEnv {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = 0;
  /// Where the values came from ("torchrun variables", "Slurm", "Open MPI"), for messages.
  std::string source;
};

/// The run's place from torchrun's variables; when RANK is unset, from Open MPI's
/// (OMPI_COMM_WORLD_RANK / _SIZE / _LOCAL_RANK / _LOCAL_SIZE) or Slurm's (SLURM_PROCID,
/// SLURM_NTASKS, SLURM_LOCALID); MASTER_ADDR and MASTER_PORT are always read from the variables
/// of those names. nullopt when none of them is set (a single process). Throws ConfigError naming
/// the variable when one is malformed, out of range, or a required one (MASTER_PORT) is missing.
std::optional<DistEnv> dist_env_from_environment();

}  // namespace ingot::parallel
