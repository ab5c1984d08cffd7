// State dicts (name -> tensor, torch's naming) to and from safetensors files, and strict
// loading into a model's existing tensors with torch-style error reports.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ingot/io/safetensors.h"
#include "ingot/tensor/tensor.h"

namespace ingot::io {

using StateDict = std::map<std::string, Tensor>;

/// What load_into did not match (filled when strict is false; strict loads throw instead).
struct LoadReport {
  std::vector<std::string> missing;     ///< in the targets, not in the loaded dict
  std::vector<std::string> unexpected;  ///< in the loaded dict, not in the targets
};

/// Copies `loaded` into the existing tensors `targets` by name (Tensor::copy_, under no-grad).
/// Everything is checked before anything is copied, so a failed load changes nothing.
/// Shape or dtype mismatches always throw; missing and unexpected keys throw when `strict`.
/// The ingot::InputError lists every problem by name in one line, prefixed by `source`
/// (e.g. the file path) when given.
LoadReport load_into(const StateDict& targets, const StateDict& loaded, bool strict = true,
                     std::string_view source = {});

/// The same for targets in registration order (nn::Module::state_dict()); names must be unique.
LoadReport load_into(const NamedTensors& targets, const StateDict& loaded, bool strict = true,
                     std::string_view source = {});

/// The first NaN or infinity among the floating-point tensors, as "'fc.weight' holds nan at element
/// 12 of [10, 784]"; empty when every value is finite (integer and bool tensors are skipped).
std::string first_nonfinite(const NamedTensors& tensors);

/// InputError "<source>: <first_nonfinite>: ..." when a value is not finite: weights that would
/// only give NaN predictions (or train from them) are refused when they are loaded.
void require_finite(const NamedTensors& tensors, std::string_view source);

/// Saves a state dict as a safetensors file, atomically.
void save_state_dict(const std::filesystem::path& path, const StateDict& state, const Metadata& metadata = {});

/// Reads a safetensors file and load_into()s `targets`; returns the file's metadata.
Metadata load_state_dict(const std::filesystem::path& path, const StateDict& targets, bool strict = true,
                         LoadReport* report = nullptr);

}  // namespace ingot::io
