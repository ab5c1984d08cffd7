// NonFiniteGuard: the global norm as the fast check; a host scan names the culprit (and clears a
// norm that overflowed on large but finite values).
#include "ingot/train/nonfinite_guard.h"

#include <cmath>

#include "ingot/base/grad_mode.h"
#include "ingot/ops/multi_tensor.h"

namespace ingot::train {
namespace {

bool all_finite(const Tensor& t) {
  for (double v : t.detach().to(DType::F64).to_vector<double>())
    if (!std::isfinite(v)) return false;
  return true;
}

}  // namespace

std::string NonFiniteGuard::first_nonfinite(bool gradients) const {
  NoGradGuard no_grad;
  std::vector<Tensor> ts;
  for (const auto& [name, p] : params_) {
    const Tensor t = gradients ? p.grad() : p;
    if (t.defined()) ts.push_back(t);
  }
  if (ts.empty() || std::isfinite(global_norm(ts).item())) return "";
  for (const auto& [name, p] : params_) {
    const Tensor t = gradients ? p.grad() : p;
    if (t.defined() && !all_finite(t)) return fmt::format("{} {}", gradients ? "the gradient of" : "the weight", name);
  }
  return "";
}

std::string NonFiniteGuard::check_gradients() const { return first_nonfinite(true); }
std::string NonFiniteGuard::check_weights() const { return first_nonfinite(false); }

}  // namespace ingot::train
