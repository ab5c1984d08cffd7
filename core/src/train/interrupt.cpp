// Interrupt: SIGINT / SIGTERM / SIGHUP handlers that only touch async-signal-safe state (a lock-free
// atomic, write(2), sigaction(2)), installed and restored by InterruptGuard.
#include "ingot/train/interrupt.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

namespace ingot::train {
namespace {

std::atomic<int> g_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "the signal flag must be lock-free to be set in a handler");

// The notice lives in static storage: the handler may not allocate or touch a std::string.
char g_notice[256] = {};
std::atomic<size_t> g_notice_len{0};
std::atomic<int> g_depth{0};  // guards alive (not touched by the handler)

void set_default(int sig) {
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, nullptr);
}

extern "C" void on_interrupt(int sig) {
  const int saved_errno = errno;  // a handler must leave errno as it found it
  int expected = 0;
  g_signal.compare_exchange_strong(expected, sig);
  // The signals go back to their default action, so the next one kills a run that never polls.
  set_default(SIGINT);
  set_default(SIGTERM);
  set_default(SIGHUP);
  const size_t len = g_notice_len.load();
  if (len > 0) {
    const ssize_t ignored = write(STDERR_FILENO, g_notice, len);
    (void)ignored;
  }
  errno = saved_errno;
}

void install(int sig, struct sigaction* previous) {
  struct sigaction act {};
  act.sa_handler = on_interrupt;
  sigemptyset(&act.sa_mask);
  // Block the other signals while the handler runs so they cannot race on the flag and the reset.
  sigaddset(&act.sa_mask, SIGINT);
  sigaddset(&act.sa_mask, SIGTERM);
  sigaddset(&act.sa_mask, SIGHUP);
  act.sa_flags = SA_RESTART;  // a read() in a data worker is not failed by the signal
  INGOT_CHECK(sigaction(sig, &act, previous) == 0, "InterruptGuard: sigaction({}) failed: {}", sig,
              std::strerror(errno));
}

}  // namespace

InterruptGuard::InterruptGuard(std::string_view notice) {
  const size_t len = std::min(notice.size(), sizeof(g_notice) - 1);
  g_notice_len.store(0);
  if (len > 0) std::memcpy(g_notice, notice.data(), len);  // an empty view may hold nullptr
  g_notice_len.store(len);
  // The outermost guard starts clean; an inner one (a stage inside the CLI's guard) keeps a signal
  // that arrived before it, so a Ctrl-C during start-up is not forgotten.
  if (g_depth.fetch_add(1) == 0) g_signal.store(0);
  install(SIGINT, &previous_int_);
  try {
    install(SIGTERM, &previous_term_);
    install(SIGHUP, &previous_hup_);
  } catch (...) {
    sigaction(SIGTERM, &previous_term_, nullptr);
    sigaction(SIGINT, &previous_int_, nullptr);
    throw;
  }
}

InterruptGuard::~InterruptGuard() {
  g_depth.fetch_sub(1);
  sigaction(SIGHUP, &previous_hup_, nullptr);
  sigaction(SIGTERM, &previous_term_, nullptr);
  sigaction(SIGINT, &previous_int_, nullptr);
}

bool interrupted() { return g_signal.load() != 0; }
int signal_number() { return g_signal.load(); }
void clear_interrupt() { g_signal.store(0); }
void set_interrupt(int sig) {
  int none = 0;
  g_signal.compare_exchange_strong(none, sig);
}

ExitCode exit_code_for_signal(int sig) {
  if (sig == SIGINT) return ExitCode::Interrupted;
  if (sig == SIGTERM) return ExitCode::Terminated;
  return static_cast<ExitCode>(128 + sig);
}

}  // namespace ingot::train
