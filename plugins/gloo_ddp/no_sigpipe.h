// NoSigpipe: while alive, a write by this thread to a socket whose peer has gone fails with EPIPE
// (which gloo turns into an IoException) instead of killing the process with SIGPIPE. gloo writes
// with writev, which has no MSG_NOSIGNAL; the signal is blocked for the calling thread only, and a
// SIGPIPE raised meanwhile is consumed before the old mask comes back. A thread started while it
// is alive (gloo's TCP event loop) keeps SIGPIPE blocked for good.
#pragma once

#include <pthread.h>
#include <signal.h>
#include <time.h>

namespace ingot::gloo_ddp {

class NoSigpipe {
 public:
  NoSigpipe() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    sigemptyset(&pending);
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~NoSigpipe() {
    if (!was_pending_) {
      sigset_t pending;
      sigemptyset(&pending);
      sigpending(&pending);
      if (sigismember(&pending, SIGPIPE) == 1) {
        const timespec zero{0, 0};
        sigtimedwait(&pipe_, nullptr, &zero);
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  NoSigpipe(const NoSigpipe&) = delete;
  NoSigpipe& operator=(const NoSigpipe&) = delete;

 private:
  sigset_t pipe_;
  sigset_t old_;
  bool was_pending_ = false;
};

}  // namespace ingot::gloo_ddp
