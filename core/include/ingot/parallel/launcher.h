// Launcher: starts the ranks of one node of a distributed run as child processes (torchrun's
// environment variables set), watches them, and stops them together when one fails or a signal
// arrives. POSIX only.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ingot::parallel {

/// How to start the ranks of this node.
struct LaunchOptions {
  int nproc_per_node = 1;  ///< ranks on this node (>= 1)
  int nnodes = 1;          ///< nodes of the run (>= 1)
  int node_rank = 0;       ///< this node, in [0, nnodes)
  /// Where rank 0 hosts the key-value store. Empty: 127.0.0.1, allowed only with nnodes == 1.
  std::string master_addr;
  /// 0: pick a free TCP port on master_addr (only with nnodes == 1); else 1..65535.
  int master_port = 0;
  /// After a rank fails or a signal is forwarded: how long the other ranks get to stop before
  /// they are sent SIGKILL.
  std::chrono::milliseconds stop_timeout{30000};
  /// > 0: OMP_NUM_THREADS of each rank (over the environment's). 0: the environment's
  /// OMP_NUM_THREADS if set, else the usable cores / nproc_per_node, at least 1.
  int threads_per_rank = 0;
  /// The ranks' environment before the launcher's variables ("NAME=value" entries). Unset: this
  /// process's environment.
  std::optional<std::vector<std::string>> environment;
  /// Receives each of the launcher's own lines (without newline, starting "ingot launch:").
  /// Unset: the line goes to stderr.
  std::function<void(std::string_view)> on_message;
};

/// How one rank ended.
struct RankExit {
  int rank = 0;        ///< global rank
  int local_rank = 0;  ///< rank on this node
  pid_t pid = 0;
  int exit_code = 0;  ///< its exit status (when it exited), else 0
  int signal = 0;     ///< the signal that killed it, else 0
};

/// What a launch came to.
struct LaunchResult {
  /// 0 when every rank exited 0. Else the first failed rank's exit code (128 + n for a rank
  /// killed by signal n), or 128 + n when signal n to the launcher came first (130 for SIGINT,
  /// 143 for SIGTERM, 129 for SIGHUP).
  int exit_code = 0;
  std::vector<RankExit> ranks;  ///< by local rank
  /// The line that named the first failed rank (or the forwarded signal); empty when none.
  std::string first_failure;
};

/// Starts nproc_per_node processes of `argv` (argv[0] an executable: a path, or a name looked up
/// in the environment's PATH), each with the environment plus RANK (node_rank * nproc_per_node +
/// local rank), LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT and
/// OMP_NUM_THREADS, in its own process group, and waits until all have ended.
///
/// A rank that exits non-zero or is killed while others run: one line names it, the others get
/// SIGTERM, and SIGKILL after stop_timeout. SIGINT, SIGTERM or SIGHUP to this process while it
/// waits: forwarded once to every rank (SIGKILL after stop_timeout); a second one sends SIGKILL at
/// once. The process's handlers for those signals are replaced during the call and restored after
/// it. Every child is reaped before the call returns or throws. One launch at a time per process.
/// Throws ConfigError for invalid options or an executable that cannot be found or run.
LaunchResult launch(const LaunchOptions& options, const std::vector<std::string>& argv);

/// A TCP port that was free on `addr` a moment ago (bound to port 0, read, closed). Throws
/// ConfigError when `addr` cannot be bound.
int pick_free_port(const std::string& addr);

/// The conventional name of a signal ("SIGKILL"), or "signal N" for an unusual one.
std::string signal_name(int sig);

}  // namespace ingot::parallel
