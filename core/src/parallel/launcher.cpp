// Launcher: fork/execve of the ranks (each in its own process group, the environment built before
// the fork), a polling wait loop that reaps them, and the stop protocol: SIGTERM or the forwarded
// signal, then SIGKILL after the grace period.
#include "ingot/parallel/launcher.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iterator>

#include "ingot/base/error.h"
#include "launch_env.h"

extern char** environ;

namespace ingot::parallel {
namespace {

// The launcher's signal state: written by the handler, polled by the wait loop.
std::atomic<int> g_first_signal{0};
std::atomic<int> g_signal_count{0};
std::atomic<bool> g_launch_active{false};
constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP};

extern "C" void on_launcher_signal(int sig) {
  int expected = 0;
  g_first_signal.compare_exchange_strong(expected, sig);
  g_signal_count.fetch_add(1);
}

// While alive: SIGINT / SIGTERM / SIGHUP are counted (one ignored by the caller, as under nohup,
// stays ignored, and the ranks inherit that), and SIGCHLD is at its default so waitpid sees the
// ranks. Restores the previous dispositions, and only one launch runs at a time.
class SignalScope {
 public:
  SignalScope() {
    INGOT_CHECK(!g_launch_active.exchange(true), "launch: another launch is running in this process");
    g_first_signal.store(0);
    g_signal_count.store(0);
    struct sigaction act {};
    act.sa_handler = on_launcher_signal;
    sigemptyset(&act.sa_mask);
    for (const int sig : kForwarded) sigaddset(&act.sa_mask, sig);
    for (size_t i = 0; i < std::size(kForwarded); ++i) {
      sigaction(kForwarded[i], nullptr, &previous_[i]);
      if (previous_[i].sa_handler != SIG_IGN) sigaction(kForwarded[i], &act, nullptr);
    }
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(SIGCHLD, &dfl, &previous_chld_);
  }
  ~SignalScope() {
    sigaction(SIGCHLD, &previous_chld_, nullptr);
    for (size_t i = 0; i < std::size(kForwarded); ++i) sigaction(kForwarded[i], &previous_[i], nullptr);
    g_launch_active.store(false);
  }
  SignalScope(const SignalScope&) = delete;
  SignalScope& operator=(const SignalScope&) = delete;

 private:
  struct sigaction previous_[std::size(kForwarded)]{};
  struct sigaction previous_chld_ {};
};

struct Child {
  RankExit exit;
  bool reaped = false;
};

// The started ranks. Whatever path leaves launch() (an exception included), the destructor kills
// and reaps every rank still unreaped: no zombie, no orphan.
class Children {
 public:
  Children() = default;
  Children(const Children&) = delete;
  Children& operator=(const Children&) = delete;
  ~Children() {
    signal_running(SIGKILL);
    for (Child& c : list_)
      if (!c.reaped) wait_blocking(c);
  }

  std::vector<Child>& list() { return list_; }
  int running() const {
    return static_cast<int>(std::count_if(list_.begin(), list_.end(), [](const Child& c) { return !c.reaped; }));
  }
  /// Sends `sig` to the process group of every rank not yet reaped (so a rank's own children
  /// get it too); a rank's pid stays its group's id until it is reaped.
  void signal_running(int sig) const {
    for (const Child& c : list_)
      if (!c.reaped && kill(-c.exit.pid, sig) != 0) kill(c.exit.pid, sig);
  }
  /// Reaps `c` if it has ended; true when it was reaped now.
  static bool try_reap(Child& c) {
    int status = 0;
    const pid_t r = waitpid(c.exit.pid, &status, WNOHANG);
    if (r == 0 || (r < 0 && errno == EINTR)) return false;
    record(c, r == c.exit.pid ? status : -1);
    return true;
  }
  static void wait_blocking(Child& c) {
    int status = 0;
    pid_t r = 0;
    do r = waitpid(c.exit.pid, &status, 0);
    while (r < 0 && errno == EINTR);
    record(c, r == c.exit.pid ? status : -1);
  }

 private:
  // status -1: the rank was reaped elsewhere and its status is lost; it counts as a failure.
  static void record(Child& c, int status) {
    c.reaped = true;
    if (status < 0) {
      c.exit.exit_code = 1;
    } else if (WIFSIGNALED(status)) {
      c.exit.signal = WTERMSIG(status);
    } else {
      c.exit.exit_code = WEXITSTATUS(status);
    }
  }
  std::vector<Child> list_;
};

// Forks one rank: own process group, default signal mask, killed with the launcher (Linux), then
// execve. Only async-signal-safe calls between fork and execve. Returns the pid; throws (the child
// reaped) when the program could not be executed.
pid_t spawn(const std::string& path, const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  std::vector<char*> cargv;
  for (const std::string& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  std::vector<char*> cenv;
  for (const std::string& e : env) cenv.push_back(const_cast<char*>(e.c_str()));
  cenv.push_back(nullptr);
  int fds[2];
  INGOT_CHECK(pipe2(fds, O_CLOEXEC) == 0, "launch: pipe failed: {}", std::strerror(errno));
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    const int err = errno;
    close(fds[0]);
    close(fds[1]);
    throw Error(fmt::format("launch: fork failed: {}", std::strerror(err)));
  }
  if (pid == 0) {
    close(fds[0]);
    setpgid(0, 0);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);  // the launcher died before prctl
#else
    (void)parent;
#endif
    execve(path.c_str(), cargv.data(), cenv.data());
    const int err = errno;
    const ssize_t ignored = write(fds[1], &err, sizeof err);
    (void)ignored;
    _exit(127);
  }
  setpgid(pid, pid);  // also here, so the group exists before the parent signals it
  close(fds[1]);
  int err = 0;
  ssize_t n = 0;
  do n = read(fds[0], &err, sizeof err);
  while (n < 0 && errno == EINTR);
  close(fds[0]);
  if (n == static_cast<ssize_t>(sizeof err)) {
    Child failed{{0, 0, pid, 0, 0}, false};
    Children::wait_blocking(failed);
    throw ConfigError(fmt::format("launch: cannot run '{}': {}", path, std::strerror(err)));
  }
  return pid;
}

void sleep_briefly() {
  const timespec ts{0, 10'000'000};  // 10 ms; a signal ends it early
  nanosleep(&ts, nullptr);
}

std::string describe(const RankExit& r) {
  if (r.signal != 0)
    return fmt::format("rank {} (pid {}) was killed by signal {} ({})", r.rank, r.pid, r.signal, signal_name(r.signal));
  return fmt::format("rank {} (pid {}) exited with code {}", r.rank, r.pid, r.exit_code);
}

}  // namespace

LaunchResult launch(const LaunchOptions& options, const std::vector<std::string>& argv) {
  validate(options, argv);
  const std::vector<std::string> base = options.environment ? *options.environment : environment_of(environ);
  const std::string path = find_executable(argv.front(), base);
  const std::string addr = options.master_addr.empty() ? "127.0.0.1" : options.master_addr;
  const int port = options.master_port != 0 ? options.master_port : pick_free_port(addr);
  const auto say = [&](const std::string& line) {
    if (options.on_message) {
      options.on_message(line);
    } else {
      std::fprintf(stderr, "%s\n", line.c_str());
      std::fflush(stderr);
    }
  };

  LaunchResult result;
  const SignalScope signals;
  Children children;
  children.list().reserve(static_cast<size_t>(options.nproc_per_node));
  for (int local = 0; local < options.nproc_per_node; ++local) {
    const int rank = options.node_rank * options.nproc_per_node + local;
    const std::vector<std::string> env = rank_environment(base, options, addr, port, rank, local);
    const pid_t pid = spawn(path, argv, env);
    children.list().push_back(Child{{rank, local, pid, 0, 0}, false});
  }

  using Clock = std::chrono::steady_clock;
  bool stopping = false;
  bool killed = false;
  Clock::time_point deadline{};
  const auto begin_stop = [&] {
    if (stopping) return;
    stopping = true;
    deadline = Clock::now() + options.stop_timeout;
  };
  int signals_handled = 0;
  while (children.running() > 0) {
    for (Child& c : children.list()) {
      if (c.reaped || !Children::try_reap(c)) continue;
      const bool failed = c.exit.exit_code != 0 || c.exit.signal != 0;
      if (!failed || stopping) continue;
      const bool others = children.running() > 0;
      result.first_failure =
          fmt::format("ingot launch: {}{}", describe(c.exit), others ? "; stopping the other ranks" : "");
      result.exit_code = c.exit.signal != 0 ? 128 + c.exit.signal : c.exit.exit_code;
      say(result.first_failure);
      begin_stop();
      children.signal_running(SIGTERM);
    }
    const int count = g_signal_count.load();
    if (count > signals_handled && children.running() > 0) {
      if (signals_handled == 0) {
        const int sig = g_first_signal.load();
        const std::string line = fmt::format(
            "ingot launch: got {}; forwarding it to the ranks (a second signal stops them at once)", signal_name(sig));
        say(line);
        if (result.exit_code == 0) {
          result.exit_code = 128 + sig;
          result.first_failure = line;
        }
        begin_stop();
        children.signal_running(sig);
      }
      if (count >= 2 && !killed) {
        say("ingot launch: second signal; sending SIGKILL to the ranks");
        children.signal_running(SIGKILL);
        killed = true;
      }
      signals_handled = count;
    }
    if (stopping && !killed && children.running() > 0 && Clock::now() >= deadline) {
      std::string ranks;
      for (const Child& c : children.list())
        if (!c.reaped) ranks += fmt::format("{}{}", ranks.empty() ? "" : ", ", c.exit.rank);
      say(fmt::format("ingot launch: rank(s) {} still running {:.1f} s after the stop; sending SIGKILL", ranks,
                      std::chrono::duration<double>(options.stop_timeout).count()));
      children.signal_running(SIGKILL);
      killed = true;
    }
    if (children.running() > 0) sleep_briefly();
  }
  for (const Child& c : children.list()) result.ranks.push_back(c.exit);
  return result;
}

}  // namespace ingot::parallel
