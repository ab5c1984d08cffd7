// State-dict bridge: safetensors files <-> named tensors, with torch-style strict loading.
#include "ingot/io/state_dict.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

#include "ingot/base/grad_mode.h"
#include "ingot/tensor/half.h"

namespace ingot::io {
namespace {

std::string quoted_list(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += fmt::format("{}'{}'", out.empty() ? "" : ", ", n);
  return out;
}

const void* host_data(const Tensor& t) {
  return static_cast<const char*>(t.storage()->data()) + t.offset() * dtype_size(t.dtype());
}

/// Element `i` of a contiguous host tensor of a floating dtype.
double value_at(const Tensor& t, int64_t i) {
  const void* p = host_data(t);
  switch (t.dtype()) {
    case DType::F32:
      return static_cast<const float*>(p)[i];
    case DType::F64:
      return static_cast<const double*>(p)[i];
    case DType::F16:
      return Half::to_float(static_cast<const uint16_t*>(p)[i]);
    default:
      return BFloat16::to_float(static_cast<const uint16_t*>(p)[i]);
  }
}

/// The index of the first non-finite element of a contiguous host tensor, or -1.
int64_t first_nonfinite_index(const Tensor& t) {
  const void* p = host_data(t);
  const int64_t n = t.numel();
  const auto scan = [n](auto* v, auto is_finite) -> int64_t {
    for (int64_t i = 0; i < n; ++i)
      if (!is_finite(v[i])) return i;
    return -1;
  };
  switch (t.dtype()) {
    case DType::F32:
      return scan(static_cast<const float*>(p), [](float x) { return std::isfinite(x); });
    case DType::F64:
      return scan(static_cast<const double*>(p), [](double x) { return std::isfinite(x); });
    case DType::F16:  // all-ones exponent: an infinity or a NaN
      return scan(static_cast<const uint16_t*>(p), [](uint16_t b) { return (b & 0x7c00) != 0x7c00; });
    case DType::BF16:
      return scan(static_cast<const uint16_t*>(p), [](uint16_t b) { return (b & 0x7f80) != 0x7f80; });
    default:
      return -1;
  }
}

}  // namespace

std::string first_nonfinite(const NamedTensors& tensors) {
  NoGradGuard no_grad;
  for (const auto& [name, tensor] : tensors) {
    if (!tensor.defined() || !is_floating(tensor.dtype())) continue;
    const Tensor t = tensor.strided().to(Device::cpu()).contiguous();
    const int64_t i = first_nonfinite_index(t);
    if (i < 0) continue;
    return fmt::format("'{}' holds {} at element {} of {}", name, value_at(t, i), i, t.shape().str());
  }
  return "";
}

void require_finite(const NamedTensors& tensors, std::string_view source) {
  if (const std::string bad = first_nonfinite(tensors); !bad.empty())
    throw InputError(
        fmt::format("{}: {}: the weights are not finite (saved from a diverged run, or damaged); use "
                    "the weights of a run that trained well",
                    source, bad));
}

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
