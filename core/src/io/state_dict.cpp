// State-dict bridge: safetensors files <-> named tensors, with torch-style strict loading.
#include "ingot/io/state_dict.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ingot/base/grad_mode.h"

namespace ingot::io {
namespace {

std::string quoted_list(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += fmt::format("{}'{}'", out.empty() ? "" : ", ", n);
  return out;
}

}  // namespace

LoadReport load_into(const StateDict& targets, const StateDict& loaded, bool strict, std::string_view source) {
  LoadReport report;
  std::vector<std::string> mismatches;
  for (const auto& [name, target] : targets) {
    const auto it = loaded.find(name);
    if (it == loaded.end()) {
      report.missing.push_back(name);
      continue;
    }
    const Tensor& value = it->second;
    if (!(value.shape() == target.shape())) {
      mismatches.push_back(fmt::format("size mismatch for '{}': the checkpoint has shape {}, the model {}", name,
                                       value.shape().str(), target.shape().str()));
    } else if (value.dtype() != target.dtype()) {
      mismatches.push_back(fmt::format("dtype mismatch for '{}': the checkpoint has {}, the model {}", name,
                                       dtype_name(value.dtype()), dtype_name(target.dtype())));
    }
  }
  for (const auto& [name, _] : loaded) {
    if (!targets.contains(name)) report.unexpected.push_back(name);
  }
  std::vector<std::string> problems;
  if (strict && !report.missing.empty()) {
    problems.push_back(fmt::format("missing key(s): {}", quoted_list(report.missing)));
  }
  if (strict && !report.unexpected.empty()) {
    problems.push_back(fmt::format("unexpected key(s): {}", quoted_list(report.unexpected)));
  }
  problems.insert(problems.end(), mismatches.begin(), mismatches.end());
  if (!problems.empty()) {
    const std::string prefix = source.empty() ? std::string() : fmt::format("{}: ", source);
    throw InputError(fmt::format("{}error(s) loading the state dict: {}", prefix, fmt::join(problems, "; ")));
  }
  // Loading parameters is not part of any graph (torch copies under no_grad too).
  NoGradGuard no_grad;
  for (const auto& [name, target] : targets) {
    const auto it = loaded.find(name);
    if (it != loaded.end()) target.copy_(it->second);
  }
  return report;
}

LoadReport load_into(const NamedTensors& targets, const StateDict& loaded, bool strict, std::string_view source) {
  StateDict by_name;
  for (const auto& [name, t] : targets) {
    INGOT_CHECK(by_name.emplace(name, t).second, "load_into: two target tensors are named '{}'", name);
  }
  return load_into(by_name, loaded, strict, source);
}

void save_state_dict(const std::filesystem::path& path, const StateDict& state, const Metadata& metadata) {
  save_safetensors(path, state, metadata);
}

Metadata load_state_dict(const std::filesystem::path& path, const StateDict& targets, bool strict, LoadReport* report) {
  SafetensorsFile file = load_safetensors(path);
  LoadReport r = load_into(targets, file.tensors, strict, path.string());
  if (report != nullptr) *report = std::move(r);
  return std::move(file.metadata);
}

}  // namespace ingot::io
