// Interrupt: an RAII guard that turns the first SIGINT / SIGTERM / SIGHUP into a flag that long work
// polls between steps (to save a checkpoint and leave with 130 / 143 / 129); a second signal kills
// at once, and so does the first one after a grace period where nothing polls (start-up).
#pragma once

#include <signal.h>  // POSIX sigaction

#include <chrono>
#include <string_view>

#include "ingot/base/error.h"

namespace ingot::train {

/// While alive, SIGINT, SIGTERM and SIGHUP (a closed terminal or ssh session) set the interrupt
/// flag instead of killing the process.
/// The handler is async-signal-safe: it stores the signal number in a lock-free atomic, writes
/// `notice` (if any) to stderr with write(2), and puts the signals back to their default action,
/// so a second Ctrl-C (or a second SIGTERM) still kills a run that is stuck. The destructor restores
/// the handlers (and the notice and grace) that were there before the guard. Guards nest (last in,
/// first out).
///
/// A phase that cannot poll everywhere (start-up: a read that blocks, a slow allocation) gives a
/// `grace`: the first signal that arrives while that guard is the innermost also arms a deadline,
/// and a process still alive `grace` after the signal ends by the signal's default action (the
/// shell sees 128 + n; the kernel releases its locks). A guard without grace (the training loop,
/// which polls after every step and saves a checkpoint) arms none while it is the innermost.
class InterruptGuard {
 public:
  /// Installs the handlers; the outermost guard also clears the flag (an inner one keeps a signal
  /// that arrived earlier). `notice` (at most 255 bytes kept), e.g.
  /// "ingot: stopping after the current step (press Ctrl-C again to stop now)\n", is printed on
  /// the first signal; empty prints nothing. `grace` (whole seconds; zero: none) as above.
  explicit InterruptGuard(std::string_view notice = {}, std::chrono::seconds grace = std::chrono::seconds(0));
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

 private:
  struct sigaction previous_int_ {};
  struct sigaction previous_term_ {};
  struct sigaction previous_hup_ {};
  struct sigaction previous_alarm_ {};
  char previous_notice_[256] = {};
  size_t previous_notice_len_ = 0;
  int previous_grace_ = 0;
};

/// True once SIGINT, SIGTERM or SIGHUP arrived under a guard (stays true after the guard ends,
/// until the next guard or clear_interrupt()).
bool interrupted();
/// The signal that arrived first (SIGINT, SIGTERM, SIGHUP), or 0.
int signal_number();
/// Forgets an earlier signal (a new guard does this too).
void clear_interrupt();
/// Sets the flag as if `sig` had arrived (keeps a signal that did): the ranks of a distributed run
/// that agreed to stop because another rank got the signal stop the same way.
void set_interrupt(int sig);

/// The CLI's exit code for a signal: 130 for SIGINT, 143 for SIGTERM, 128 + n for another (SIGHUP:
/// 129).
ExitCode exit_code_for_signal(int sig);

}  // namespace ingot::train
