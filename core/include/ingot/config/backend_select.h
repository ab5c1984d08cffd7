// Backend selection from a config's `backend:` value: auto (everything available, CPU fallback),
// cpu, cuda (required), or one named backend or plugin (required; others of its device disabled).
#pragma once

#include <string>
#include <vector>

#include "ingot/tensor/device.h"

namespace ingot::config {

/// What select_backends decided.
struct BackendSelection {
  std::string requested;            ///< the config's value ("auto" when absent)
  Device device;                    ///< where the run places its tensors
  std::vector<std::string> enabled; ///< enabled backends of `device`'s kind, highest priority first
  std::string note;                 ///< one line when `auto` fell back (e.g. no CUDA), else ""
};

/// Applies `requested` to BackendRegistry (via restrict_to) after loading plugins. Throws
/// BackendMissingError (exit 3) when a required backend is absent or unavailable, naming the
/// reason from the plugin's record; `where` ("FILE:LINE") prefixes messages.
BackendSelection select_backends(const std::string& requested, const std::string& where = "");

}  // namespace ingot::config
