// Shared test helpers: skipping, random tensors, closeness checks with stated tolerances.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ingot/runtime/op_info.h"
#include "ingot/tensor/tensor.h"

namespace ingot {
class Backend;
}  // namespace ingot

namespace ingot::test {

/// Runs body(r) for r = 0 .. n - 1, each on a thread of its own (the ranks of a group inside one
/// process); waits for all, then rethrows the first failure.
void run_threads(int n, const std::function<void(int)>& body);

/// Prints "INGOT_SKIP: <reason>" (ctest reports the test skipped) — call then return.
void skip(const std::string& reason);
/// The standard output of the shell command `cmd`, or "" when it fails (exit status not 0).
std::string capture(const std::string& cmd);
/// Whether `python` imports torch, transformers and safetensors; reports the test skipped (naming
/// the bench venv that has them) when it does not.
bool transformers_or_skip(const std::string& python);
/// The backend `backend` of plugin `plugin`, loaded through the plugin loader; nullptr (and the
/// test reported skipped, with the reason) when the plugin is not built or not available here.
const Backend* plugin_backend_or_skip(const std::string& plugin, const std::string& backend);

/// Whether a backend's claim of `what` meets the expectation that it claims it on CPUs from `from`
/// up: claimed, true; declined at a lower ISA level (oneDNN 2.6 has only a "ref:" kernel there),
/// a WARN naming the level and false (the caller skips or checks the reference fallback);
/// declined from `from` up, a test failure.
bool claimed_from(bool claimed, const std::string& what, const std::string& from_isa);

/// The CPU backends to run a check on one at a time (BackendRegistry::restrict_to each name):
/// "reference", then every loaded plugin backend of the CPU (plugins loaded first).
std::vector<std::string> cpu_backends();
/// Backend sets to run a check under: {"reference"} alone, then {} (every backend loaded) when
/// cpu_onednn is built — whose opaque layouts and fused kernels the check must survive too. Warns,
/// naming `what`, when cpu_onednn is not loaded.
std::vector<std::vector<std::string>> backend_sets(const std::string& what);
/// Lifts any BackendRegistry::restrict_to when the scope ends.
struct RestoreBackends {
  RestoreBackends() = default;
  RestoreBackends(const RestoreBackends&) = delete;
  RestoreBackends& operator=(const RestoreBackends&) = delete;
  ~RestoreBackends();
};

/// Uniform values in [lo, hi) from a fixed-seed generator, any dtype (integers are rounded).
Tensor random_tensor(const Shape& shape, DType dtype, uint64_t seed, double lo = -1.0, double hi = 1.0);

/// Square conv attributes (same stride / padding / dilation in both spatial dims).
ingot_attr_conv2d conv2d_attr(int64_t stride, int64_t pad, int64_t dilation, int64_t groups, bool has_bias = false,
                              int32_t activation = INGOT_ACT_NONE);
/// Square pooling attributes.
ingot_attr_pool2d pool2d_attr(int64_t kernel, int64_t stride, int64_t pad, bool ceil_mode,
                              bool count_include_pad = true);

/// Max |a-b| - (atol + rtol*|b|) over all elements, after casting both to f64 (<= 0 means close).
/// Shapes must match; NaN in the same place counts as equal.
double excess_error(const Tensor& a, const Tensor& b, double atol, double rtol);

/// A message describing the first mismatch, or "" when all close.
std::string compare(const Tensor& actual, const Tensor& expected, double atol, double rtol);

}  // namespace ingot::test

/// REQUIRE that `actual` is close to `expected` within atol + rtol*|expected|.
#define INGOT_REQUIRE_CLOSE(actual, expected, atol, rtol)                                        \
  do {                                                                                           \
    const std::string ingot_msg_ = ::ingot::test::compare((actual), (expected), (atol), (rtol)); \
    INFO(ingot_msg_);                                                                            \
    REQUIRE(ingot_msg_.empty());                                                                 \
  } while (0)
