// Interrupt: SIGINT / SIGTERM / SIGHUP handlers that only touch async-signal-safe state (a lock-free
// atomic, write(2), sigaction(2), alarm(2)), installed and restored by InterruptGuard; the grace
// deadline is a SIGALRM whose handler raises the first signal again at its default action.
#include "ingot/train/interrupt.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>

namespace ingot::train {
namespace {

std::atomic<int> g_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "the signal flag must be lock-free to be set in a handler");

// The notice lives in static storage: the handler may not allocate or touch a std::string.
char g_notice[256] = {};
std::atomic<size_t> g_notice_len{0};
std::atomic<int> g_depth{0};  // guards alive (not touched by the handler)
std::atomic<int> g_grace{0};  // the innermost guard's grace in seconds (0: no deadline)
static_assert(std::atomic<size_t>::is_always_lock_free && std::atomic<int>::is_always_lock_free);

void set_default(int sig) {
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, nullptr);
}

void write_stderr(const char* text, size_t len) {
  const ssize_t ignored = write(STDERR_FILENO, text, len);
  (void)ignored;
}

extern "C" void on_interrupt(int sig) {
  const int saved_errno = errno;  // a handler must leave errno as it found it
  int expected = 0;
  const bool first = g_signal.compare_exchange_strong(expected, sig);
  // The signals go back to their default action, so the next one kills a run that never polls.
  set_default(SIGINT);
  set_default(SIGTERM);
  set_default(SIGHUP);
  const size_t len = g_notice_len.load();
  if (len > 0) write_stderr(g_notice, len);
  if (const int grace = g_grace.load(); first && grace > 0) alarm(static_cast<unsigned>(grace));
  errno = saved_errno;
}

// The grace period ran out: the first signal, raised again at its default action, ends the process
// as if no guard had been there.
extern "C" void on_deadline(int) {
  const int sig = g_signal.load();
  if (sig == 0) return;  // (not our deadline: no signal is pending)
  char text[96] = "ingot: not stopped ";
  size_t len = std::strlen(text);
  char digits[12];
  size_t n = 0;
  for (int g = g_grace.load(); n == 0 || g > 0; g /= 10) digits[n++] = static_cast<char>('0' + g % 10);
  while (n > 0) text[len++] = digits[--n];
  const char rest[] = " s after the signal (blocked?): stopping now\n";
  std::memcpy(text + len, rest, sizeof rest - 1);
  write_stderr(text, len + sizeof rest - 1);
  set_default(sig);
  raise(sig);
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

InterruptGuard::InterruptGuard(std::string_view notice, std::chrono::seconds grace) {
  install(SIGINT, &previous_int_);
  try {
    install(SIGTERM, &previous_term_);
    install(SIGHUP, &previous_hup_);
  } catch (...) {
    sigaction(SIGTERM, &previous_term_, nullptr);
    sigaction(SIGINT, &previous_int_, nullptr);
    throw;
  }
  // The outermost guard starts clean; an inner one (a stage inside the CLI's guard) keeps a signal
  // that arrived before it, so a Ctrl-C during start-up is not forgotten.
  if (g_depth.fetch_add(1) == 0) g_signal.store(0);
  previous_notice_len_ = g_notice_len.load();
  std::memcpy(previous_notice_, g_notice, previous_notice_len_);
  const size_t len = std::min(notice.size(), sizeof(g_notice) - 1);
  g_notice_len.store(0);
  if (len > 0) std::memcpy(g_notice, notice.data(), len);  // an empty view may hold nullptr
  g_notice_len.store(len);
  previous_grace_ = g_grace.load();
  const int seconds = static_cast<int>(std::clamp<int64_t>(grace.count(), 0, 3600));
  if (seconds > 0) {
    struct sigaction act {};
    act.sa_handler = on_deadline;
    sigemptyset(&act.sa_mask);
    sigaction(SIGALRM, &act, &previous_alarm_);
  }
  g_grace.store(seconds);
}

InterruptGuard::~InterruptGuard() {
  g_depth.fetch_sub(1);
  sigaction(SIGHUP, &previous_hup_, nullptr);
  sigaction(SIGTERM, &previous_term_, nullptr);
  sigaction(SIGINT, &previous_int_, nullptr);
  if (g_grace.load() > 0) {  // the deadline this guard may have armed: its phase is over
    alarm(0);
    sigaction(SIGALRM, &previous_alarm_, nullptr);
  }
  g_grace.store(previous_grace_);
  g_notice_len.store(0);
  std::memcpy(g_notice, previous_notice_, previous_notice_len_);
  g_notice_len.store(previous_notice_len_);
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
