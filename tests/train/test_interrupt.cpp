// InterruptGuard: raise() under the guard sets the flag instead of killing the process, the
// first signal puts the default action back (a second one kills), the guard restores the
// handlers that were there before, and a grace deadline ends a process that never polls.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "ingot/train/interrupt.h"

using ingot::ExitCode;
using ingot::train::InterruptGuard;

namespace {

volatile sig_atomic_t g_test_handler_calls = 0;
extern "C" void test_handler(int) { g_test_handler_calls = g_test_handler_calls + 1; }

using Handler = void (*)(int);

Handler current_handler(int sig) {
  struct sigaction now {};
  sigaction(sig, nullptr, &now);
  return now.sa_handler;
}

// Installs `test_handler` for SIGINT and SIGTERM for the test's duration (Catch2 has its own).
struct TestHandlers {
  struct sigaction old_int {
  }, old_term{};
  TestHandlers() {
    struct sigaction act {};
    act.sa_handler = test_handler;
    sigemptyset(&act.sa_mask);
    sigaction(SIGINT, &act, &old_int);
    sigaction(SIGTERM, &act, &old_term);
  }
  ~TestHandlers() {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGTERM, &old_term, nullptr);
  }
};

}  // namespace

TEST_CASE("InterruptGuard: SIGINT sets the flag, resets to default, handlers restored", "[train][interrupt]") {
  TestHandlers outer;
  g_test_handler_calls = 0;
  {
    InterruptGuard guard;
    CHECK_FALSE(ingot::train::interrupted());
    CHECK(ingot::train::signal_number() == 0);
    CHECK(current_handler(SIGINT) != test_handler);
    REQUIRE(raise(SIGINT) == 0);
    CHECK(ingot::train::interrupted());
    CHECK(ingot::train::signal_number() == SIGINT);
    // The next Ctrl-C (or SIGTERM) gets the default action: it kills a run that never polls.
    CHECK(current_handler(SIGINT) == SIG_DFL);
    CHECK(current_handler(SIGTERM) == SIG_DFL);
  }
  CHECK(current_handler(SIGINT) == test_handler);
  CHECK(current_handler(SIGTERM) == test_handler);
  CHECK(g_test_handler_calls == 0);
  CHECK(ingot::train::interrupted());  // the flag outlives the guard for the exit code
  CHECK(ingot::train::exit_code_for_signal(ingot::train::signal_number()) == ExitCode::Interrupted);
  ingot::train::clear_interrupt();
  CHECK_FALSE(ingot::train::interrupted());
}

TEST_CASE("InterruptGuard: SIGTERM, a fresh guard, and the exit codes", "[train][interrupt]") {
  TestHandlers outer;
  {
    InterruptGuard guard;
    REQUIRE(raise(SIGTERM) == 0);
    CHECK(ingot::train::signal_number() == SIGTERM);
  }
  {
    InterruptGuard guard;  // a new guard starts with a clear flag
    CHECK_FALSE(ingot::train::interrupted());
  }
  CHECK(current_handler(SIGTERM) == test_handler);
  CHECK(ingot::train::exit_code_for_signal(SIGINT) == ExitCode::Interrupted);
  CHECK(static_cast<int>(ExitCode::Interrupted) == 130);
  CHECK(ingot::train::exit_code_for_signal(SIGTERM) == ExitCode::Terminated);
  CHECK(static_cast<int>(ExitCode::Terminated) == 143);
  CHECK(static_cast<int>(ingot::train::exit_code_for_signal(SIGHUP)) == 128 + SIGHUP);
  ingot::train::clear_interrupt();
}

TEST_CASE("InterruptGuard: the notice is written to stderr on the first signal", "[train][interrupt]") {
  TestHandlers outer;
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  const int saved_stderr = dup(STDERR_FILENO);
  REQUIRE(saved_stderr >= 0);
  dup2(fds[1], STDERR_FILENO);
  {
    InterruptGuard guard("ingot: stopping after the current step\n");
    raise(SIGINT);
  }
  dup2(saved_stderr, STDERR_FILENO);
  close(saved_stderr);
  close(fds[1]);
  char buf[128] = {};
  const ssize_t n = read(fds[0], buf, sizeof(buf) - 1);
  close(fds[0]);
  CHECK(std::string(buf, n > 0 ? static_cast<size_t>(n) : 0) == "ingot: stopping after the current step\n");
  ingot::train::clear_interrupt();
}

namespace {

/// Runs `body` in a child process that reports "ready" through a pipe first, sends it SIGTERM and
/// waits up to `wait_ms` for it to end. Returns its wait status, or -1 when it was still alive
/// then (it is killed and reaped).
template <class Body>
int status_after_sigterm(Body body, int wait_ms) {
  int ready[2];
  REQUIRE(pipe(ready) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {  // (only async-signal-safe calls from here: the parent may have threads)
    close(ready[0]);
    body(ready[1]);
    _exit(0);
  }
  close(ready[1]);
  char byte = 0;
  REQUIRE(read(ready[0], &byte, 1) == 1);
  close(ready[0]);
  kill(pid, SIGTERM);
  int status = 0;
  for (int waited = 0; waited < wait_ms; waited += 10) {
    if (waitpid(pid, &status, WNOHANG) == pid) return status;
    usleep(10'000);
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return -1;
}

void signal_ready(int fd) {
  const char byte = 1;
  const ssize_t ignored = write(fd, &byte, 1);
  (void)ignored;
  close(fd);
}

}  // namespace

TEST_CASE("InterruptGuard: with a grace, a first signal that nothing polls ends the process", "[train][interrupt]") {
  // A start-up blocked where it cannot poll (here: pause(), as a read of a FIFO would block) is
  // ended by the signal's default action once the grace has passed.
  const int status = status_after_sigterm(
      [](int ready) {
        InterruptGuard guard({}, std::chrono::seconds(1));
        signal_ready(ready);
        for (;;) pause();  // (the first signal returns from pause(); nothing ever polls the flag)
      },
      5000);
  REQUIRE(status != -1);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGTERM);  // (the shell sees 143)
}

TEST_CASE("InterruptGuard: an inner guard without grace arms no deadline", "[train][interrupt]") {
  // The training loop's guard: a checkpoint being saved after the signal is never cut short.
  const int status = status_after_sigterm(
      [](int ready) {
        InterruptGuard outer({}, std::chrono::seconds(1));
        InterruptGuard inner;
        signal_ready(ready);
        for (;;) pause();
      },
      2500);
  CHECK(status == -1);  // still alive well after the outer guard's grace
  // And a process that polls leaves as it decides, before any deadline.
  const int polled = status_after_sigterm(
      [](int ready) {
        InterruptGuard guard({}, std::chrono::seconds(1));
        signal_ready(ready);
        while (!ingot::train::interrupted()) pause();
        _exit(7);
      },
      5000);
  REQUIRE(polled != -1);
  CHECK(WIFEXITED(polled));
  CHECK(WEXITSTATUS(polled) == 7);
}
