// `ingot launch [options] run CONFIG.yaml ...` or `ingot launch [options] -- COMMAND ...`: starts the
// ranks of this machine for a distributed run and waits for them (ingot/parallel/launcher.h).
#include <unistd.h>

#include <charconv>
#include <climits>
#include <cmath>
#include <iostream>

#include "cli.h"
#include "ingot/base/error.h"
#include "ingot/parallel/launcher.h"

namespace ingot::cli {
namespace {

constexpr const char* kLaunchHelp =
    "usage: ingot launch [options] run CONFIG.yaml [run's options...]\n"
    "       ingot launch [options] -- COMMAND [ARGS...]\n"
    "\n"
    "Starts the ranks of this machine for a distributed run: --nproc-per-node processes of\n"
    "`ingot run CONFIG.yaml ...` (or of COMMAND), each with RANK, LOCAL_RANK, WORLD_SIZE,\n"
    "LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT and OMP_NUM_THREADS set, and waits for them.\n"
    "When a rank fails, the others get SIGTERM (SIGKILL after --stop-timeout) and the launch exits\n"
    "with the failed rank's code (128 + N for signal N). SIGINT, SIGTERM or SIGHUP is forwarded to\n"
    "every rank once (exit 130 / 143 / 129); a second one kills the ranks at once.\n"
    "\n"
    "options:\n"
    "  --nproc-per-node N    ranks on this machine (default 1)\n"
    "  --nnodes M            machines in the run (default 1)\n"
    "  --node-rank R         this machine's index, 0..M-1 (default 0): its ranks are R*N .. R*N+N-1\n"
    "  --master-addr A       address of rank 0's machine (default 127.0.0.1; required with --nnodes > 1)\n"
    "  --master-port P       port of rank 0's store (default: a free one; required with --nnodes > 1)\n"
    "  --stop-timeout S      seconds the ranks get to stop before SIGKILL (default 30)\n"
    "  --threads-per-rank T  OMP_NUM_THREADS of each rank (default: the environment's, else cores / N)\n"
    "  -h, --help            show this help\n"
    "\n"
    "docs/distributed.md shows launches on several machines, under Slurm and under mpirun.\n";

constexpr const char* kSeeHelp = "see 'ingot launch --help'";

int parse_int(const std::string& option, const std::string& text) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || text.empty())
    throw ConfigError(fmt::format("launch: {} expects an integer, got '{}'; {}", option, text, kSeeHelp));
  return value;
}

std::chrono::milliseconds parse_seconds(const std::string& option, const std::string& text) {
  double seconds = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
  if (ec != std::errc{} || end != text.data() + text.size() || text.empty() || !std::isfinite(seconds) || seconds < 0 ||
      seconds > INT_MAX)
    throw ConfigError(fmt::format("launch: {} expects seconds (>= 0), got '{}'; {}", option, text, kSeeHelp));
  return std::chrono::milliseconds(static_cast<int64_t>(std::llround(seconds * 1000)));
}

}  // namespace

std::string self_executable() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "/proc/self/exe";
  return std::string(buf, static_cast<size_t>(n));
}

int cmd_launch(const std::vector<std::string>& args) {
  parallel::LaunchOptions o;
  std::vector<std::string> command;
  size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help") {
      std::cout << kLaunchHelp;
      return 0;
    }
    if (a == "--" || a == "run") break;
    if (!a.starts_with("--"))
      throw ConfigError(fmt::format(
          "launch: expected 'run CONFIG.yaml ...' or '-- COMMAND ...' after the options, got '{}'; {}", a, kSeeHelp));
    const size_t eq = a.find('=');
    const std::string name = a.substr(0, eq);
    std::string value;
    if (eq != std::string::npos) {
      value = a.substr(eq + 1);
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      throw ConfigError(fmt::format("launch: {} needs a value; {}", name, kSeeHelp));
    }
    if (name == "--nproc-per-node") {
      o.nproc_per_node = parse_int(name, value);
    } else if (name == "--nnodes") {
      o.nnodes = parse_int(name, value);
    } else if (name == "--node-rank") {
      o.node_rank = parse_int(name, value);
    } else if (name == "--master-addr") {
      o.master_addr = value;
    } else if (name == "--master-port") {
      o.master_port = parse_int(name, value);
    } else if (name == "--stop-timeout") {
      o.stop_timeout = parse_seconds(name, value);
    } else if (name == "--threads-per-rank") {
      o.threads_per_rank = parse_int(name, value);
    } else {
      throw ConfigError(fmt::format("launch: unknown option '{}'; {}", name, kSeeHelp));
    }
  }
  if (i < args.size() && args[i] == "run") {
    command.push_back(self_executable());
    command.insert(command.end(), args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
    if (command.size() < 3) throw ConfigError(fmt::format("launch: 'run' needs a CONFIG.yaml; {}", kSeeHelp));
  } else if (i < args.size()) {
    command.assign(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
    if (command.empty()) throw ConfigError(fmt::format("launch: '--' needs a command after it; {}", kSeeHelp));
  } else {
    throw ConfigError(
        fmt::format("launch: nothing to run: give 'run CONFIG.yaml ...' or '-- COMMAND ...'; {}", kSeeHelp));
  }
  if (interrupted()) return 0;  // a signal during start-up: main reports it (130 / 143 / 129)
  return parallel::launch(o, command).exit_code;
}

}  // namespace ingot::cli
