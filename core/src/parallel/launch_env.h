// The launcher's preparations: option checks, the executable's path, each rank's environment.
#pragma once

#include <string>
#include <vector>

#include "ingot/parallel/launcher.h"

namespace ingot::parallel {

/// Throws ConfigError (one line naming the option and its range) for invalid options or an empty
/// command.
void validate(const LaunchOptions& options, const std::vector<std::string>& argv);

/// The "NAME=value" entries of a null-terminated environment block.
std::vector<std::string> environment_of(char** env);

/// `program` when it holds a '/', else the first executable file of that name in the PATH of
/// `env`. Throws ConfigError when there is none.
std::string find_executable(const std::string& program, const std::vector<std::string>& env);

/// `base` without the launcher's variables, plus RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE,
/// MASTER_ADDR, MASTER_PORT and OMP_NUM_THREADS (kept from `base` unless threads_per_rank > 0).
std::vector<std::string> rank_environment(const std::vector<std::string>& base, const LaunchOptions& options,
                                          const std::string& addr, int port, int rank, int local_rank);

}  // namespace ingot::parallel
