// DistEnv: the launch variables, checked one by one.
#include "ingot/parallel/dist_env.h"

#include <fmt/format.h>

#include <charconv>
#include <cstdlib>

#include "ingot/base/error.h"

namespace ingot::parallel {

namespace {

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

int as_int(const char* name, const char* value, int lo, int hi) {
  int out = 0;
  const char* end = value + std::char_traits<char>::length(value);
  const auto [p, ec] = std::from_chars(value, end, out);
  INGOT_CHECK_AS(ec == std::errc() && p == end && out >= lo && out <= hi, ConfigError,
                 "environment variable {}={} is not an integer in [{}, {}] (set by the launcher: check the "
                 "launch line)",
                 name, value, lo, hi);
  return out;
}

struct Names {
  const char* rank;
  const char* world;
  const char* local_rank;
  const char* local_world;
  const char* source;
};

constexpr Names kTorchrun{"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "torchrun variables"};
constexpr Names kOpenMpi{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
                         "OMPI_COMM_WORLD_LOCAL_SIZE", "Open MPI"};
constexpr Names kSlurm{"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE", "Slurm"};

}  // namespace

std::optional<DistEnv> dist_env_from_environment() {
  const Names* names = nullptr;
  for (const Names* n : {&kTorchrun, &kOpenMpi, &kSlurm})
    if (env(n->rank) != nullptr) {
      names = n;
      break;
    }
  if (names == nullptr) {
    INGOT_CHECK_AS(env("WORLD_SIZE") == nullptr, ConfigError,
                   "WORLD_SIZE is set but RANK is not: start each rank with `ingot launch` (or set RANK, "
                   "LOCAL_RANK, MASTER_ADDR and MASTER_PORT as torchrun does)");
    return std::nullopt;
  }
  constexpr int kMax = 1 << 20;
  DistEnv d;
  d.source = names->source;
  const char* world = env(names->world);
  INGOT_CHECK_AS(world != nullptr, ConfigError, "{} is set but {} is not (both come from the launcher)", names->rank,
                 names->world);
  d.world_size = as_int(names->world, world, 1, kMax);
  d.rank = as_int(names->rank, env(names->rank), 0, d.world_size - 1);
  d.local_rank = env(names->local_rank) ? as_int(names->local_rank, env(names->local_rank), 0, kMax) : d.rank;
  // Slurm's tasks-per-node may read "2(x3)"; the local world size is informational, so a value
  // that is not a plain integer falls back to the world size.
  if (const char* lw = env(names->local_world); lw != nullptr && names != &kSlurm)
    d.local_world_size = as_int(names->local_world, lw, 1, kMax);
  else
    d.local_world_size = d.world_size;
  if (const char* a = env("MASTER_ADDR")) d.master_addr = a;
  if (d.world_size > 1) {
    const char* port = env("MASTER_PORT");
    INGOT_CHECK_AS(port != nullptr, ConfigError,
                   "MASTER_PORT is not set (rank {} of {}, from {}): set MASTER_ADDR and MASTER_PORT to the address "
                   "rank 0 listens on, or start the run with `ingot launch`",
                   d.rank, d.world_size, d.source);
    d.master_port = as_int("MASTER_PORT", port, 1, 65535);
  } else if (const char* port = env("MASTER_PORT")) {
    d.master_port = as_int("MASTER_PORT", port, 0, 65535);
  }
  return d;
}

}  // namespace ingot::parallel
