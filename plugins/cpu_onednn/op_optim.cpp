// Optimizer family: the fused SGD_UPDATE and ADAM_UPDATE ops (and their CAPTURABLE forms, which
// read lr and step from a float64 tensor) and the multi-tensor GLOBAL_NORM (gradient clipping, the
// trainer's non-finite check) as OpenMP-parallel, vectorisable f32 loops over dense tensors (oneDNN
// has no optimizer primitive; the loops are memory bound).
#include <omp.h>

#include <cmath>

#include "op_families.h"
#include "simd_clones.h"

namespace ingot::onednn {
namespace {

bool handles(int32_t op) {
  return op == INGOT_OP_SGD_UPDATE || op == INGOT_OP_ADAM_UPDATE || op == INGOT_OP_GLOBAL_NORM ||
         op == INGOT_OP_SGD_UPDATE_CAPTURABLE || op == INGOT_OP_ADAM_UPDATE_CAPTURABLE;
}

bool dense_f32(const ingot_tensor_desc& t) {
  return t.device_kind == INGOT_DEVICE_CPU && t.dtype == INGOT_F32 && sdk::is_contiguous(t);
}

// A dense host f32 tensor of `param`'s shape (0-size ones are fine: nothing to do).
bool dense_like(const ingot_tensor_desc& t, const ingot_tensor_desc& param) {
  if (t.device_kind != INGOT_DEVICE_CPU || t.dtype != INGOT_F32 || t.ndim != param.ndim || !sdk::is_contiguous(t))
    return false;
  for (int d = 0; d < t.ndim; ++d) {
    if (t.shape[d] != param.shape[d]) return false;
  }
  return true;
}

template <class A>
const A* attr_of(const sdk::OpCall& c) {
  const auto* a = static_cast<const A*>(c.attrs);
  return a != nullptr && a->struct_size >= sizeof(A) ? a : nullptr;
}

// Tensors per parameter; 0 when the attributes are missing.
int group_size(const sdk::OpCall& c) {
  if (c.op == INGOT_OP_SGD_UPDATE) return attr_of<ingot_attr_sgd>(c) != nullptr ? 3 : 0;
  const auto* a = attr_of<ingot_attr_adam>(c);
  if (a == nullptr || a->step < 1) return 0;
  return a->amsgrad ? 5 : 4;
}

// A CAPTURABLE call as the plain update it stands for: the inputs after the hyper tensor, the
// attributes copied into `sgd` / `adam` with lr (and step) from it. `read_hyper` false (supports():
// no data is read there) takes step 1. False when the hyper tensor is not a dense host f64 [2].
bool plain_update(const sdk::OpCall& c, bool read_hyper, sdk::OpCall& plain, ingot_attr_sgd& sgd,
                  ingot_attr_adam& adam) {
  plain = c;
  if (c.op != INGOT_OP_SGD_UPDATE_CAPTURABLE && c.op != INGOT_OP_ADAM_UPDATE_CAPTURABLE) return true;
  if (c.n_in < 1) return false;
  const ingot_tensor_desc& h = c.in[0];
  if (h.device_kind != INGOT_DEVICE_CPU || h.dtype != INGOT_F64 || sdk::numel(h) != 2 || !sdk::is_contiguous(h))
    return false;
  const double lr = read_hyper ? sdk::data_ptr<const double>(h)[0] : 0.0;
  const double step = read_hyper ? sdk::data_ptr<const double>(h)[1] : 1.0;
  plain.in = c.in + 1;
  plain.n_in = c.n_in - 1;
  if (c.op == INGOT_OP_SGD_UPDATE_CAPTURABLE) {
    const auto* a = attr_of<ingot_attr_sgd>(c);
    if (a == nullptr) return false;
    sgd = *a;
    sgd.lr = lr;
    plain.op = INGOT_OP_SGD_UPDATE;
    plain.attrs = &sgd;
  } else {
    const auto* a = attr_of<ingot_attr_adam>(c);
    if (a == nullptr) return false;
    adam = *a;
    adam.lr = lr;
    adam.step = static_cast<int64_t>(step);
    plain.op = INGOT_OP_ADAM_UPDATE;
    plain.attrs = &adam;
  }
  return true;
}

bool supports_plain(const sdk::OpCall& c) {
  if (c.op == INGOT_OP_GLOBAL_NORM) {
    if (c.n_out != 1 || !dense_f32(c.out[0]) || sdk::numel(c.out[0]) != 1) return false;
    for (int k = 0; k < c.n_in; ++k)
      if (!dense_f32(c.in[k])) return false;
    return true;
  }
  const int per = group_size(c);
  if (per == 0 || c.n_out != 0 || c.n_in % per != 0) return false;
  const bool sgd_without_buf = c.op == INGOT_OP_SGD_UPDATE && attr_of<ingot_attr_sgd>(c)->momentum == 0.0;
  for (int k = 0; k < c.n_in; k += per) {
    for (int j = 0; j < per; ++j) {
      if (sgd_without_buf && j == 2) continue;  // never read
      if (!dense_like(c.in[k + j], c.in[k])) return false;
    }
  }
  return true;
}

bool supports(OnednnBackend&, const sdk::OpCall& c) {
  sdk::OpCall plain;
  ingot_attr_sgd sgd_attr;
  ingot_attr_adam adam_attr;
  return plain_update(c, false, plain, sgd_attr, adam_attr) && supports_plain(plain);
}

// INGOT_SIMD_CLONES: sqrt and divide dominate with 4-wide SSE2.

// Small tensors run on the calling thread: a fork/join costs more than the work.
bool parallel(int64_t n) { return n >= Exec::kSerialGrain && omp_get_max_threads() > 1; }

INGOT_SIMD_CLONES void sgd(const ingot_attr_sgd& a, int64_t n, float* p, const float* g, float* buf) {
  const auto lr = static_cast<float>(a.lr), wd = static_cast<float>(a.weight_decay);
  const auto mom = static_cast<float>(a.momentum), damp = static_cast<float>(1.0 - a.dampening);
  if (a.momentum == 0.0) {
#pragma omp parallel for simd if (parallel(n))
    for (int64_t i = 0; i < n; ++i) p[i] -= lr * (g[i] + wd * p[i]);
    return;
  }
  const bool first = a.first_step != 0, nesterov = a.nesterov != 0;
#pragma omp parallel for simd if (parallel(n))
  for (int64_t i = 0; i < n; ++i) {
    const float d = g[i] + wd * p[i];
    const float m = first ? d : mom * buf[i] + damp * d;
    buf[i] = m;
    p[i] -= lr * (nesterov ? d + mom * m : m);
  }
}

// One Adam/AdamW pass; constants in f32, the loop branch-free so that it vectorises.
struct AdamConsts {
  float step_size, inv_bias2_sqrt, b1, b2, c1, c2, eps, wd, shrink;
};

template <bool kAmsgrad>
INGOT_SIMD_CLONES void adam_loop(const AdamConsts& k, int64_t n, float* p, const float* g, float* m, float* v, float* vmax) {
#pragma omp parallel for simd if (parallel(n))
  for (int64_t i = 0; i < n; ++i) {
    const float w = p[i] * k.shrink;
    const float gi = g[i] + k.wd * p[i];
    const float mi = k.b1 * m[i] + k.c1 * gi;
    float vi = k.b2 * v[i] + k.c2 * gi * gi;
    m[i] = mi;
    v[i] = vi;
    if constexpr (kAmsgrad) {
      const float old = vmax[i];  // a value, not std::max's reference: keeps the loop branch-free
      vi = old > vi ? old : vi;
      vmax[i] = vi;
    }
    p[i] = w - k.step_size * mi / (std::sqrt(vi) * k.inv_bias2_sqrt + k.eps);
  }
}

void adam(const ingot_attr_adam& a, int64_t n, float* p, const float* g, float* m, float* v, float* vmax) {
  const double step = static_cast<double>(a.step);
  AdamConsts k;
  k.step_size = static_cast<float>(a.lr / (1.0 - std::pow(a.beta1, step)));
  k.inv_bias2_sqrt = static_cast<float>(1.0 / std::sqrt(1.0 - std::pow(a.beta2, step)));
  k.b1 = static_cast<float>(a.beta1), k.b2 = static_cast<float>(a.beta2);
  k.c1 = static_cast<float>(1.0 - a.beta1), k.c2 = static_cast<float>(1.0 - a.beta2);
  k.eps = static_cast<float>(a.eps);
  // Adam adds weight_decay * param to the gradient; AdamW scales the param first (decoupled).
  k.wd = static_cast<float>(a.decoupled ? 0.0 : a.weight_decay);
  k.shrink = static_cast<float>(a.decoupled ? 1.0 - a.lr * a.weight_decay : 1.0);
  if (vmax != nullptr) {
    adam_loop<true>(k, n, p, g, m, v, vmax);
  } else {
    adam_loop<false>(k, n, p, g, m, v, nullptr);
  }
}

// Sum of squares in double, as the reference: one NaN or inf anywhere makes the norm non-finite.
INGOT_SIMD_CLONES double sum_of_squares(int64_t n, const float* x) {
  double s = 0.0;
#pragma omp parallel for simd reduction(+ : s) if (parallel(n))
  for (int64_t i = 0; i < n; ++i) s += static_cast<double>(x[i]) * static_cast<double>(x[i]);
  return s;
}

void execute(const sdk::OpCall& call, Exec& ex) {
  if (!supports(ex.backend(), call)) throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "cpu_onednn optim: unsupported call");
  ex.backend().note_impl(call.op, "cpu_onednn:omp_simd");
  sdk::OpCall c;
  ingot_attr_sgd sgd_attr;
  ingot_attr_adam adam_attr;
  plain_update(call, true, c, sgd_attr, adam_attr);
  if (call.op == INGOT_OP_ADAM_UPDATE_CAPTURABLE && adam_attr.step < 1)
    throw sdk::Failure(INGOT_ERR_INVALID_ARGUMENT, "adam_update_capturable: hyper[1] (step) must be >= 1");
  if (c.op == INGOT_OP_GLOBAL_NORM) {
    double s = 0.0;
    for (int k = 0; k < c.n_in; ++k) s += sum_of_squares(sdk::numel(c.in[k]), sdk::data_ptr<const float>(c.in[k]));
    *sdk::data_ptr<float>(c.out[0]) = static_cast<float>(std::sqrt(s));
    return;
  }
  const int per = group_size(c);
  for (int k = 0; k < c.n_in; k += per) {
    const int64_t n = sdk::numel(c.in[k]);
    if (n == 0) continue;
    auto* p = sdk::data_ptr<float>(c.in[k]);
    const auto* g = sdk::data_ptr<const float>(c.in[k + 1]);
    if (c.op == INGOT_OP_SGD_UPDATE) {
      const auto& a = *attr_of<ingot_attr_sgd>(c);
      sgd(a, n, p, g, a.momentum == 0.0 ? nullptr : sdk::data_ptr<float>(c.in[k + 2]));
    } else {
      adam(*attr_of<ingot_attr_adam>(c), n, p, g, sdk::data_ptr<float>(c.in[k + 2]), sdk::data_ptr<float>(c.in[k + 3]),
           per == 5 ? sdk::data_ptr<float>(c.in[k + 4]) : nullptr);
    }
  }
}

}  // namespace

const OpFamily& optim_family() {
  static const OpFamily f{&handles, &supports, &execute, nullptr};
  return f;
}

}  // namespace ingot::onednn
