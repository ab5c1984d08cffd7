// The launcher's preparations: option checks, PATH lookup, the free port, each rank's environment
// (torchrun's variables) and signal names.
#include "launch_env.h"

#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>
#ifdef __linux__
#include <sched.h>
#endif

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <thread>
#include <utility>

#include "ingot/base/error.h"

namespace ingot::parallel {
namespace {

constexpr std::array<const char*, 6> kRankVariables = {"RANK",        "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE",
                                                       "MASTER_ADDR", "MASTER_PORT"};

std::string name_of(const std::string& entry) { return entry.substr(0, entry.find('=')); }

// The value of `name` in `env`, or nullptr.
const std::string* find_entry(const std::vector<std::string>& env, const std::string& name) {
  for (const std::string& e : env)
    if (name_of(e) == name) return &e;
  return nullptr;
}

// The cores this process may run on (its affinity mask), at least 1.
int usable_cores() {
#ifdef __linux__
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
#endif
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

}  // namespace

void validate(const LaunchOptions& o, const std::vector<std::string>& argv) {
  INGOT_CHECK_AS(!argv.empty() && !argv.front().empty(), ConfigError, "launch: no command to run for the ranks");
  INGOT_CHECK_AS(o.nproc_per_node >= 1, ConfigError, "launch: nproc-per-node must be at least 1, got {}",
                 o.nproc_per_node);
  INGOT_CHECK_AS(o.nnodes >= 1, ConfigError, "launch: nnodes must be at least 1, got {}", o.nnodes);
  INGOT_CHECK_AS(o.node_rank >= 0 && o.node_rank < o.nnodes, ConfigError,
                 "launch: node-rank must be in [0, {}) for {} node(s), got {}", o.nnodes, o.nnodes, o.node_rank);
  INGOT_CHECK_AS(o.master_port >= 0 && o.master_port <= 65535, ConfigError,
                 "launch: master-port must be in 1..65535 (0: pick a free one), got {}", o.master_port);
  INGOT_CHECK_AS(o.nnodes == 1 || (o.master_port != 0 && !o.master_addr.empty()), ConfigError,
                 "launch: {} nodes need an explicit master-addr and master-port (rank 0's node, the same on every "
                 "node)",
                 o.nnodes);
  INGOT_CHECK_AS(o.stop_timeout.count() >= 0, ConfigError, "launch: stop-timeout must not be negative, got {} ms",
                 o.stop_timeout.count());
  INGOT_CHECK_AS(o.threads_per_rank >= 0, ConfigError,
                 "launch: threads-per-rank must be at least 1 (0: cores / ranks), got {}", o.threads_per_rank);
}

std::vector<std::string> environment_of(char** env) {
  std::vector<std::string> out;
  for (char** e = env; e != nullptr && *e != nullptr; ++e) out.emplace_back(*e);
  return out;
}

std::string find_executable(const std::string& program, const std::vector<std::string>& env) {
  if (program.find('/') != std::string::npos) {
    INGOT_CHECK_AS(access(program.c_str(), X_OK) == 0, ConfigError, "launch: cannot run '{}': {}", program,
                   std::strerror(errno));
    return program;
  }
  const std::string* entry = find_entry(env, "PATH");
  const std::string path = entry != nullptr ? entry->substr(5) : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= path.size()) {
    const size_t end = std::min(path.find(':', start), path.size());
    const std::string dir = end > start ? path.substr(start, end - start) : ".";
    const std::string candidate = dir + "/" + program;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  throw ConfigError(fmt::format("launch: '{}' is not in PATH; give its path", program));
}

std::vector<std::string> rank_environment(const std::vector<std::string>& base, const LaunchOptions& o,
                                          const std::string& addr, int port, int rank, int local_rank) {
  std::vector<std::string> env;
  env.reserve(base.size() + kRankVariables.size() + 1);
  const std::string* omp = find_entry(base, "OMP_NUM_THREADS");
  const bool keep_omp = omp != nullptr && o.threads_per_rank == 0;
  for (const std::string& e : base) {
    const std::string name = name_of(e);
    const bool ours = std::find(kRankVariables.begin(), kRankVariables.end(), name) != kRankVariables.end();
    if (!ours && (name != "OMP_NUM_THREADS" || keep_omp)) env.push_back(e);
  }
  env.push_back(fmt::format("RANK={}", rank));
  env.push_back(fmt::format("LOCAL_RANK={}", local_rank));
  env.push_back(fmt::format("WORLD_SIZE={}", o.nnodes * o.nproc_per_node));
  env.push_back(fmt::format("LOCAL_WORLD_SIZE={}", o.nproc_per_node));
  env.push_back(fmt::format("MASTER_ADDR={}", addr));
  env.push_back(fmt::format("MASTER_PORT={}", port));
  if (!keep_omp) {
    const int threads = o.threads_per_rank > 0 ? o.threads_per_rank : std::max(1, usable_cores() / o.nproc_per_node);
    env.push_back(fmt::format("OMP_NUM_THREADS={}", threads));
  }
  return env;
}

int pick_free_port(const std::string& addr) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const int rc = getaddrinfo(addr.c_str(), "0", &hints, &found);
  INGOT_CHECK_AS(rc == 0, ConfigError, "launch: master-addr '{}' cannot be resolved: {}", addr, gai_strerror(rc));
  std::string last_error = "no address";
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    sockaddr_storage bound{};
    socklen_t len = sizeof bound;
    if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len) == 0) {
      close(fd);
      freeaddrinfo(found);
      const in_port_t port = bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                                         : reinterpret_cast<sockaddr_in*>(&bound)->sin_port;
      return ntohs(port);
    }
    last_error = std::strerror(errno);
    close(fd);
  }
  freeaddrinfo(found);
  throw ConfigError(fmt::format("launch: cannot bind a port on master-addr '{}' ({}); is it this machine's address?",
                                addr, last_error));
}

std::string signal_name(int sig) {
  static constexpr std::pair<int, const char*> kNames[] = {
      {SIGHUP, "SIGHUP"},   {SIGINT, "SIGINT"},   {SIGQUIT, "SIGQUIT"}, {SIGILL, "SIGILL"},   {SIGTRAP, "SIGTRAP"},
      {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},   {SIGKILL, "SIGKILL"}, {SIGUSR1, "SIGUSR1"},
      {SIGSEGV, "SIGSEGV"}, {SIGUSR2, "SIGUSR2"}, {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"}, {SIGTERM, "SIGTERM"},
      {SIGXCPU, "SIGXCPU"}, {SIGXFSZ, "SIGXFSZ"}, {SIGSYS, "SIGSYS"}};
  for (const auto& [n, name] : kNames)
    if (n == sig) return name;
  return fmt::format("signal {}", sig);
}

}  // namespace ingot::parallel
