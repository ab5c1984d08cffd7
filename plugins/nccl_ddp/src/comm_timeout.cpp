// comm_timeout: reading INGOT_COMM_TIMEOUT_S, and poll_until's spin-then-sleep loop.
#include "comm_timeout.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "ingot/plugin/sdk.h"

namespace ingot::nccl {

std::chrono::milliseconds comm_timeout(const char* value) {
  double seconds = kDefaultTimeoutSeconds;
  if (value != nullptr && value[0] != '\0') {
    char* end = nullptr;
    seconds = std::strtod(value, &end);
    // Up to a year: a larger value would overflow the millisecond count.
    if (end == value || *end != '\0' || !std::isfinite(seconds) || seconds <= 0.0 || seconds > 3.2e7)
      throw sdk::Failure(INGOT_ERR_INVALID_ARGUMENT,
                         std::string("nccl_ddp: INGOT_COMM_TIMEOUT_S='") + value +
                             "' is not a number of seconds > 0 (unset it for the default, 300)");
  }
  return std::chrono::milliseconds(static_cast<int64_t>(std::ceil(seconds * 1000.0)));
}

std::string seconds_text(std::chrono::milliseconds timeout) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g s", static_cast<double>(timeout.count()) / 1000.0);
  return buf;
}

bool poll_until(const std::function<bool()>& ready, std::chrono::milliseconds timeout) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point deadline = Clock::now() + timeout;
  auto pause = std::chrono::microseconds(0);
  for (int spins = 0;; ++spins) {
    if (ready()) return true;
    if (Clock::now() >= deadline) return false;
    // Most waits (a barrier's one-element all_reduce, a queued collective) end within microseconds.
    if (spins < 200) {
      std::this_thread::yield();
      continue;
    }
    pause = std::min(std::chrono::microseconds(1000), pause + std::chrono::microseconds(20));
    std::this_thread::sleep_for(pause);
  }
}

}  // namespace ingot::nccl
