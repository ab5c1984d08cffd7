// Turning gloo's exceptions into the one-line messages the communicator reports.
#pragma once

#include <exception>
#include <string>

#include <gloo/common/error.h>

#include "ingot/plugin/sdk.h"

namespace ingot::gloo_ddp {

/// "gloo <what> failed: a peer rank stopped or is unreachable (<gloo's text>)" for gloo's I/O
/// errors, "gloo <what> timed out ..." for its timeouts, and for anything else gloo's text with
/// the likely causes; always one line.
inline std::string describe_failure(const std::string& what, const std::exception& e) {
  std::string text = e.what();
  for (char& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  while (!text.empty() && text.back() == ' ') text.pop_back();
  if (text.find("Timed out") != std::string::npos || text.find("timed out") != std::string::npos)
    return "gloo " + what + " timed out (INGOT_COMM_TIMEOUT_S): a peer rank stopped, is unreachable or never " +
           "made the matching call (gloo: " + text + ")";
  if (dynamic_cast<const gloo::IoException*>(&e) != nullptr)
    return "gloo " + what + " failed: a peer rank stopped or is unreachable (gloo: " + text + ")";
  return "gloo " + what + " failed: " + text + " (a peer rank stopped or is unreachable, or the ranks disagree " +
         "on the call)";
}

/// Runs fn, rethrowing anything gloo throws as sdk::Failure with describe_failure's message
/// (INGOT_ERR_TIMEOUT for a timeout, INGOT_ERR_RUNTIME otherwise); Failure passes unchanged.
template <class Fn>
void translate_errors(const std::string& what, Fn&& fn) {
  try {
    fn();
  } catch (const ingot::sdk::Failure&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {
    const std::string message = describe_failure(what, e);
    const bool timeout = message.find("timed out") != std::string::npos;
    throw ingot::sdk::Failure(timeout ? INGOT_ERR_TIMEOUT : INGOT_ERR_RUNTIME, message);
  }
}

}  // namespace ingot::gloo_ddp
