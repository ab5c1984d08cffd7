// How long the communicator waits for its peers (INGOT_COMM_TIMEOUT_S, default 300 s) and the
// polling wait that enforces it: NCCL itself would block forever on a dead peer.
#pragma once

#include <chrono>
#include <functional>
#include <string>

namespace ingot::nccl {

inline constexpr double kDefaultTimeoutSeconds = 300.0;

/// The timeout that $INGOT_COMM_TIMEOUT_S (`value`; NULL or empty: the default) sets: seconds > 0,
/// fractions allowed; throws sdk::Failure (INGOT_ERR_INVALID_ARGUMENT) quoting any other value.
std::chrono::milliseconds comm_timeout(const char* value);

/// "300 s", "0.5 s": a timeout for messages.
std::string seconds_text(std::chrono::milliseconds timeout);

/// Calls `ready` until it answers true (then returns true) or `timeout` has passed (false). It
/// spins briefly, then sleeps up to 1 ms between calls; `ready` may throw, which ends the wait.
bool poll_until(const std::function<bool()>& ready, std::chrono::milliseconds timeout);

}  // namespace ingot::nccl
