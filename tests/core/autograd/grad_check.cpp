// Generic finite-difference checker of gradient rules (see grad_check.h).
#include "grad_check.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "ingot/autograd/saved_tensors.h"
#include "ingot/ops/elementwise.h"
#include "test_support.h"

namespace ingot::test {

namespace {

constexpr double kEps = 1e-6;
constexpr double kAtol = 1e-6;
constexpr double kRtol = 1e-6;

uint64_t g_seed = 1000;

double dot(const std::vector<Tensor>& gs, const std::vector<Tensor>& ys, int n) {
  double total = 0.0;
  for (int k = 0; k < n; ++k) {
    const auto g = gs[k].to_vector<double>();
    const auto y = ys[k].to_vector<double>();
    for (size_t i = 0; i < g.size(); ++i) total += g[i] * y[i];
  }
  return total;
}

/// Pointers to the elements of a strided f64 tensor in row-major order.
std::vector<double*> elements(const Tensor& t) {
  std::vector<double*> out;
  double* base = t.data<double>();
  const Shape& shape = t.shape();
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t n = 0; n < t.numel(); ++n) {
    int64_t off = 0;
    for (int d = 0; d < shape.size(); ++d) off += idx[d] * t.strides()[d];
    out.push_back(base + off);
    for (int d = shape.size() - 1; d >= 0; --d) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

}  // namespace

Tensor rnd(const Shape& s, double lo, double hi) { return random_tensor(s, DType::F64, ++g_seed, lo, hi); }

Tensor away0(const Shape& s) {
  const Tensor x = rnd(s);
  return x + sign(x) * 0.2;
}

Tensor noncontig(const Shape& s, double lo, double hi) {
  Shape t = s;
  std::swap(t[0], t[s.size() - 1]);
  return rnd(t, lo, hi).transpose(0, s.size() - 1);
}

Tensor index(const Shape& s, int64_t bound) {
  return random_tensor(s, DType::I64, ++g_seed, 0, static_cast<double>(bound - 1));
}

void check_grad_case(const GradCase& c) {
  INFO("case " << c.name << " (" << op_info(c.op).name << ")");
  const auto forward = [&] { return run_op(c.op, c.inputs, c.outputs, c.attrs.get()); };
  const std::vector<Tensor> ys = forward();
  std::vector<Tensor> gos(ys.size());
  for (int k = 0; k < c.n_grad_outputs; ++k) gos[k] = rnd(ys[k].shape());
  REQUIRE(grad_rule(c.op) != nullptr);
  // The rule gets the call as the graph keeps it: what its GradSaves declaration names, and
  // shape-only stand-ins of the rest (reading one of those throws).
  const GradCall kept = autograd::kept_for_backward(GradCall{c.op, c.inputs, ys, c.attrs.get()});
  const std::vector<Tensor> grads = autograd::run_grad_rule(kept, gos);
  REQUIRE(grads.size() == c.inputs.size());
  for (size_t k = 0; k < c.inputs.size(); ++k) {
    const Tensor& x = c.inputs[k];
    if (x.dtype() != DType::F64 || (c.constant_inputs >> k & 1u) != 0) {  // indices, conditions, statistics
      CHECK_FALSE(grads[k].defined());
      continue;
    }
    INFO("input " << k << " " << x.shape().str());
    REQUIRE(grads[k].defined());
    REQUIRE(grads[k].shape() == x.shape());
    const std::vector<double> analytic = grads[k].to_vector<double>();
    // Perturb through the input's own strides, so non-contiguous inputs are checked as they are.
    const std::vector<double*> ptrs = elements(x);
    for (size_t i = 0; i < ptrs.size(); ++i) {
      const double orig = *ptrs[i];
      *ptrs[i] = orig + kEps;
      const double up = dot(gos, forward(), c.n_grad_outputs);
      *ptrs[i] = orig - kEps;
      const double down = dot(gos, forward(), c.n_grad_outputs);
      *ptrs[i] = orig;
      const double numeric = (up - down) / (2 * kEps);
      INFO("element " << i << ": analytic " << analytic[i] << " numeric " << numeric);
      CHECK(std::abs(numeric - analytic[i]) <= kAtol + kRtol * std::max(std::abs(numeric), std::abs(analytic[i])));
    }
  }
}

}  // namespace ingot::test
