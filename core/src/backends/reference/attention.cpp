// SCALED_DOT_PRODUCT_ATTENTION and its backward, the oracle of the fused kernels: per (batch,
// head, query) row in double, the whole row of scores at once (op_table.def has the
// definition). The keep draws of attention dropout are the Philox stream of a BERNOULLI over
// [B, H, Tq, Tk], made again in backward from the same seed and offset.
#include <cmath>
#include <limits>
#include <vector>

#include "backends/reference/check.h"
#include "backends/reference/dense_io.h"
#include "backends/reference/kernels.h"
#include "ingot/plugin/philox.h"

namespace ingot::reference {

namespace {

struct Dims {
  int64_t b, h, tq, tk, d, dv;
};

// Checks q, k, v (and the mask when the attribute names one) and returns the problem's sizes.
Dims check_inputs(const sdk::OpCall& c, const ingot_attr_attention& a, int first, int n_core) {
  const int want = n_core + (a.mask != 0 ? 1 : 0);
  expect_arity(c, want, c.op == INGOT_OP_SCALED_DOT_PRODUCT_ATTENTION ? 2 : 3);
  const ingot_tensor_desc& q = c.in[first];
  const ingot_tensor_desc& k = c.in[first + 1];
  const ingot_tensor_desc& v = c.in[first + 2];
  if (q.ndim != 4 || k.ndim != 4 || v.ndim != 4) {
    fail("{}: q {}, k {}, v {} must be [B, H, T, D]", op_name(c.op), shape_str(q), shape_str(k), shape_str(v));
  }
  const Dims d{q.shape[0], q.shape[1], q.shape[2], k.shape[2], q.shape[3], v.shape[3]};
  if (k.shape[0] != d.b || v.shape[0] != d.b || k.shape[1] != d.h || v.shape[1] != d.h || k.shape[3] != d.d ||
      v.shape[2] != d.tk) {
    fail("{}: q {}, k {}, v {} do not fit together", op_name(c.op), shape_str(q), shape_str(k), shape_str(v));
  }
  expect_dtype(c, k, q.dtype, "k");
  expect_dtype(c, v, q.dtype, "v");
  if (a.causal < 0 || a.causal > 2) fail("{}: causal = {} (0, 1 or 2)", op_name(c.op), a.causal);
  if (a.mask < 0 || a.mask > 2) fail("{}: mask = {} (0, 1 or 2)", op_name(c.op), a.mask);
  if (!(a.dropout_p >= 0.0 && a.dropout_p < 1.0)) fail("{}: dropout_p = {} is not in [0, 1)", op_name(c.op), a.dropout_p);
  if (a.mask != 0) {
    const ingot_tensor_desc& m = c.in[c.n_in - 1];
    const int64_t full[4] = {d.b, d.h, d.tq, d.tk};
    bool fits = m.ndim == 4;
    for (int i = 0; fits && i < 4; ++i) fits = m.shape[i] == full[i] || m.shape[i] == 1;
    if (!fits) fail("{}: mask {} does not broadcast to [{}, {}, {}, {}]", op_name(c.op), shape_str(m), d.b, d.h, d.tq, d.tk);
    if (a.mask == 1) expect_dtype(c, m, INGOT_BOOL, "a bool mask");
    if (a.mask == 2) expect_dtype(c, m, q.dtype, "an additive mask");
  }
  return d;
}

// The mask of row (b, h, i) as a function of key j: its dense values and the strides of its
// broadcast dims (0 for a dim of size 1).
struct MaskView {
  std::vector<double> values;
  int64_t s[4] = {0, 0, 0, 0};
  double at(int64_t b, int64_t h, int64_t i, int64_t j) const {
    return values[static_cast<size_t>(b * s[0] + h * s[1] + i * s[2] + j * s[3])];
  }
};

MaskView mask_view(const sdk::OpCall& c, const ingot_attr_attention& a) {
  MaskView m;
  if (a.mask == 0) return m;
  const ingot_tensor_desc& d = c.in[c.n_in - 1];
  m.values = read_f64(d);
  int64_t dense[INGOT_MAX_DIMS];
  dense_strides(d, dense);
  for (int i = 0; i < 4; ++i) m.s[i] = d.shape[i] == 1 ? 0 : dense[i];
  return m;
}

// Scores of one row with hidden keys as -inf, and the row's keep factors (keep / (1 - p) or 0).
class Rows {
 public:
  Rows(const sdk::OpCall& c, const ingot_attr_attention& a, const Dims& d, const std::vector<double>& q,
       const std::vector<double>& k)
      : a_(a), d_(d), q_(q), k_(k), mask_(mask_view(c, a)) {}

  void scores(int64_t b, int64_t h, int64_t i, std::vector<double>& s) const {
    const double* qi = q_.data() + ((b * d_.h + h) * d_.tq + i) * d_.d;
    const double inf = std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < d_.tk; ++j) {
      const bool hidden = (a_.causal == 1 && j > i) || (a_.causal == 2 && j > i + d_.tk - d_.tq) ||
                          (a_.mask == 1 && mask_.at(b, h, i, j) == 0.0);
      if (hidden) {
        s[j] = -inf;
        continue;
      }
      const double* kj = k_.data() + ((b * d_.h + h) * d_.tk + j) * d_.d;
      double dot = 0.0;
      for (int64_t e = 0; e < d_.d; ++e) dot += qi[e] * kj[e];
      s[j] = dot * a_.scale + (a_.mask == 2 ? mask_.at(b, h, i, j) : 0.0);
    }
  }

  void keep(int64_t b, int64_t h, int64_t i, std::vector<double>& f) const {
    const double keep_p = 1.0 - a_.dropout_p;
    for (int64_t j = 0; j < d_.tk; ++j) {
      if (a_.dropout_p == 0.0) {
        f[j] = 1.0;
        continue;
      }
      const uint64_t n = static_cast<uint64_t>(((b * d_.h + h) * d_.tq + i) * d_.tk + j);
      const sdk::PhiloxBlock block = sdk::philox_block(a_.seed, a_.offset + n / 4);
      f[j] = sdk::philox_bernoulli(block.v[n % 4], keep_p) ? 1.0 / keep_p : 0.0;
    }
  }

 private:
  const ingot_attr_attention& a_;
  const Dims& d_;
  const std::vector<double>& q_;
  const std::vector<double>& k_;
  MaskView mask_;
};

double log_sum_exp(const std::vector<double>& s) {
  double m = -std::numeric_limits<double>::infinity();
  for (double v : s) m = std::max(m, v);
  if (std::isinf(m) && m < 0) return m;
  double sum = 0.0;
  for (double v : s) sum += std::exp(v - m);
  return m + std::log(sum);
}

}  // namespace

void run_sdpa(const sdk::OpCall& c) {
  const auto& a = sdk::attr<ingot_attr_attention>(c.attrs);
  const Dims d = check_inputs(c, a, 0, 3);
  const ingot_tensor_desc& od = c.out[0];
  const ingot_tensor_desc& ld = c.out[1];
  expect_dtype(c, od, c.in[0].dtype, "output");
  if (od.ndim != 4 || od.shape[0] != d.b || od.shape[1] != d.h || od.shape[2] != d.tq || od.shape[3] != d.dv ||
      sdk::numel(ld) != d.b * d.h * d.tq) {
    fail("{}: outputs {} and {} do not fit q and v", op_name(c.op), shape_str(od), shape_str(ld));
  }
  const std::vector<double> q = read_f64(c.in[0]), k = read_f64(c.in[1]), v = read_f64(c.in[2]);
  const Rows rows(c, a, d, q, k);
  std::vector<double> o(static_cast<size_t>(d.b * d.h * d.tq * d.dv), 0.0), lse(static_cast<size_t>(d.b * d.h * d.tq));
  std::vector<double> s(static_cast<size_t>(d.tk)), f(static_cast<size_t>(d.tk));
  for (int64_t b = 0; b < d.b; ++b) {
    for (int64_t h = 0; h < d.h; ++h) {
      for (int64_t i = 0; i < d.tq; ++i) {
        const int64_t row = (b * d.h + h) * d.tq + i;
        rows.scores(b, h, i, s);
        const double l = log_sum_exp(s);
        lse[static_cast<size_t>(row)] = l;
        if (std::isinf(l) && l < 0) continue;  // no visible key: o stays 0
        rows.keep(b, h, i, f);
        double* oi = o.data() + row * d.dv;
        for (int64_t j = 0; j < d.tk; ++j) {
          const double p = std::exp(s[j] - l) * f[j];
          if (p == 0.0) continue;
          const double* vj = v.data() + ((b * d.h + h) * d.tk + j) * d.dv;
          for (int64_t e = 0; e < d.dv; ++e) oi[e] += p * vj[e];
        }
      }
    }
  }
  write_f64(od, o);
  write_f64(ld, lse);
}

void run_sdpa_bwd(const sdk::OpCall& c) {
  const auto& a = sdk::attr<ingot_attr_attention>(c.attrs);
  const Dims d = check_inputs(c, a, 1, 6);
  for (int i = 0; i < 3; ++i) {
    expect_same_shape(c, c.in[1 + i], c.out[i], "input", "its gradient");
    expect_dtype(c, c.out[i], c.in[1].dtype, "a gradient");
  }
  if (sdk::numel(c.in[0]) != d.b * d.h * d.tq * d.dv || sdk::numel(c.in[4]) != sdk::numel(c.in[0]) ||
      sdk::numel(c.in[5]) != d.b * d.h * d.tq) {
    fail("{}: grad_o {}, o {}, lse {} do not fit q and v", op_name(c.op), shape_str(c.in[0]), shape_str(c.in[4]),
         shape_str(c.in[5]));
  }
  const std::vector<double> go = read_f64(c.in[0]), q = read_f64(c.in[1]), k = read_f64(c.in[2]),
                            v = read_f64(c.in[3]), o = read_f64(c.in[4]), lse = read_f64(c.in[5]);
  const Rows rows(c, a, d, q, k);
  std::vector<double> gq(q.size(), 0.0), gk(k.size(), 0.0), gv(v.size(), 0.0);
  std::vector<double> s(static_cast<size_t>(d.tk)), f(static_cast<size_t>(d.tk));
  for (int64_t b = 0; b < d.b; ++b) {
    for (int64_t h = 0; h < d.h; ++h) {
      const int64_t kv0 = (b * d.h + h) * d.tk;
      for (int64_t i = 0; i < d.tq; ++i) {
        const int64_t row = (b * d.h + h) * d.tq + i;
        const double l = lse[static_cast<size_t>(row)];
        if (std::isinf(l) && l < 0) continue;
        rows.scores(b, h, i, s);
        rows.keep(b, h, i, f);
        const double* goi = go.data() + row * d.dv;
        const double* oi = o.data() + row * d.dv;
        double delta = 0.0;  // rowsum(dO * O) = sum_j p_ij dp_ij
        for (int64_t e = 0; e < d.dv; ++e) delta += goi[e] * oi[e];
        const double* qi = q.data() + row * d.d;
        double* gqi = gq.data() + row * d.d;
        for (int64_t j = 0; j < d.tk; ++j) {
          const double p = std::exp(s[j] - l);
          if (p == 0.0) continue;
          const double* vj = v.data() + (kv0 + j) * d.dv;
          double* gvj = gv.data() + (kv0 + j) * d.dv;
          double dp = 0.0;
          for (int64_t e = 0; e < d.dv; ++e) {
            gvj[e] += p * f[j] * goi[e];
            dp += goi[e] * vj[e];
          }
          const double ds = p * (dp * f[j] - delta) * a.scale;
          const double* kj = k.data() + (kv0 + j) * d.d;
          double* gkj = gk.data() + (kv0 + j) * d.d;
          for (int64_t e = 0; e < d.d; ++e) {
            gqi[e] += ds * kj[e];
            gkj[e] += ds * qi[e];
          }
        }
      }
    }
  }
  write_f64(c.out[0], gq);
  write_f64(c.out[1], gk);
  write_f64(c.out[2], gv);
}

}  // namespace ingot::reference
