// CROSS_ENTROPY (logits [N, C], target [N]) -> (loss [N], lse [N]) and its backward, per row in
// double (op_table.def has the definition): the oracle of the fused kernels.
#include <cmath>
#include <limits>
#include <vector>

#include "backends/reference/check.h"
#include "backends/reference/dense_io.h"
#include "backends/reference/kernels.h"

namespace ingot::reference {

namespace {

struct Problem {
  int64_t n, classes;
  std::vector<double> logits;
  std::vector<double> target;
};

Problem read_problem(const sdk::OpCall& c, const ingot_tensor_desc& logits, const ingot_tensor_desc& target,
                     const ingot_attr_cross_entropy& a) {
  if (logits.ndim != 2) fail("{}: logits {} must be [N, C]", op_name(c.op), shape_str(logits));
  if (target.ndim != 1 || target.shape[0] != logits.shape[0]) {
    fail("{}: target {} does not fit logits {}", op_name(c.op), shape_str(target), shape_str(logits));
  }
  expect_dtype(c, target, INGOT_I64, "target");
  if (!(a.label_smoothing >= 0.0 && a.label_smoothing <= 1.0)) {
    fail("{}: label_smoothing = {} is not in [0, 1]", op_name(c.op), a.label_smoothing);
  }
  Problem p{logits.shape[0], logits.shape[1], read_f64(logits), read_f64(target)};
  for (int64_t i = 0; i < p.n; ++i) {
    const auto t = static_cast<int64_t>(p.target[static_cast<size_t>(i)]);
    if (t != a.ignore_index && (t < 0 || t >= p.classes)) {
      fail("{}: target {} of row {} is outside [0, {})", op_name(c.op), t, i, p.classes);
    }
  }
  return p;
}

double row_lse(const double* z, int64_t classes) {
  double m = -std::numeric_limits<double>::infinity();
  for (int64_t j = 0; j < classes; ++j) m = std::max(m, z[j]);
  if (std::isinf(m)) return m;
  double sum = 0.0;
  for (int64_t j = 0; j < classes; ++j) sum += std::exp(z[j] - m);
  return m + std::log(sum);
}

}  // namespace

void run_cross_entropy(const sdk::OpCall& c) {
  expect_arity(c, 2, 2);
  const auto& a = sdk::attr<ingot_attr_cross_entropy>(c.attrs);
  const Problem p = read_problem(c, c.in[0], c.in[1], a);
  expect_dtype(c, c.out[0], c.in[0].dtype, "loss");
  if (sdk::numel(c.out[0]) != p.n || sdk::numel(c.out[1]) != p.n) {
    fail("{}: outputs {} and {} should hold {} rows", op_name(c.op), shape_str(c.out[0]), shape_str(c.out[1]), p.n);
  }
  const double ls = a.label_smoothing;
  std::vector<double> loss(static_cast<size_t>(p.n), 0.0), lse(static_cast<size_t>(p.n));
  for (int64_t i = 0; i < p.n; ++i) {
    const double* z = p.logits.data() + i * p.classes;
    const double l = row_lse(z, p.classes);
    lse[static_cast<size_t>(i)] = l;
    const auto t = static_cast<int64_t>(p.target[static_cast<size_t>(i)]);
    if (t == a.ignore_index) continue;
    double mean_z = 0.0;
    if (ls != 0.0) {
      for (int64_t j = 0; j < p.classes; ++j) mean_z += z[j];
      mean_z /= static_cast<double>(p.classes);
    }
    loss[static_cast<size_t>(i)] = l - (1.0 - ls) * z[t] - ls * mean_z;
  }
  write_f64(c.out[0], loss);
  write_f64(c.out[1], lse);
}

void run_cross_entropy_bwd(const sdk::OpCall& c) {
  expect_arity(c, 4, 1);
  const auto& a = sdk::attr<ingot_attr_cross_entropy>(c.attrs);
  const Problem p = read_problem(c, c.in[1], c.in[2], a);
  expect_same_shape(c, c.in[1], c.out[0], "logits", "grad_logits");
  expect_dtype(c, c.out[0], c.in[1].dtype, "grad_logits");
  if (sdk::numel(c.in[0]) != p.n || sdk::numel(c.in[3]) != p.n) {
    fail("{}: grad_loss {} and lse {} should hold {} rows", op_name(c.op), shape_str(c.in[0]), shape_str(c.in[3]), p.n);
  }
  // The saved lse is f32: at |logits| ~ 1e4 its rounding alone moves softmax by 1e-4. The oracle
  // recomputes it in double from the row (one more pass, no stored matrix).
  const std::vector<double> g = read_f64(c.in[0]);
  const double ls = a.label_smoothing;
  const double off = ls / static_cast<double>(p.classes);
  std::vector<double> gz(p.logits.size(), 0.0);
  for (int64_t i = 0; i < p.n; ++i) {
    const auto t = static_cast<int64_t>(p.target[static_cast<size_t>(i)]);
    if (t == a.ignore_index) continue;
    const double* z = p.logits.data() + i * p.classes;
    double* gi = gz.data() + i * p.classes;
    const double gl = g[static_cast<size_t>(i)];
    const double lse = row_lse(z, p.classes);
    for (int64_t j = 0; j < p.classes; ++j) {
      gi[j] = gl * (std::exp(z[j] - lse) - off - (j == t ? 1.0 - ls : 0.0));
    }
  }
  write_f64(c.out[0], gz);
}

}  // namespace ingot::reference
