// Multi-tensor optimizer ops: GLOBAL_NORM (sqrt of the sum of squares over every input, in
// double, written as one value), SGD_UPDATE over (param, grad, momentum_buf) triples and
// ADAM_UPDATE over (param, grad, exp_avg, exp_avg_sq[, max_exp_avg_sq]) with torch.optim's
// semantics, updating params and state in place; their CAPTURABLE forms read lr and step from a
// float64 tensor first.
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "backends/reference/check.h"
#include "backends/reference/dtype_dispatch.h"
#include "backends/reference/kernels.h"
#include "backends/reference/strided_iter.h"

namespace ingot::reference {

void run_global_norm(const sdk::OpCall& c) {
  if (c.n_out != 1) fail("global_norm: expects 1 output, got {}", c.n_out);  // no inputs: norm 0
  const ingot_tensor_desc& out = c.out[0];
  if (sdk::numel(out) != 1) fail("global_norm: output {} must hold one value", shape_str(out));
  double sum = 0.0;
  for (int k = 0; k < c.n_in; ++k) {
    const ingot_tensor_desc& t = c.in[k];
    if (!is_float_dtype(t.dtype))
      fail("global_norm: input {} is {}, expected floating point", k, sdk::dtype_label(t.dtype));
    const void* base = sdk::data_ptr(t);
    NdIter it(t);
    const int i = it.add(t.strides);
    for (; !it.done(); it.next()) {
      const double v = load_as<double>(base, t.dtype, it[i]);
      sum += v * v;
    }
  }
  store_as<double>(sdk::data_ptr(out), out.dtype, 0, std::sqrt(sum));
}

void run_sgd_update(const sdk::OpCall& c) {
  const auto& a = sdk::attr<ingot_attr_sgd>(c.attrs);
  if (c.n_in % 3 != 0 || c.n_out != 0) {
    fail("sgd_update: expects (param, grad, buf) triples and no outputs, got {} inputs and {} outputs", c.n_in,
         c.n_out);
  }
  for (int k = 0; k < c.n_in; k += 3) {
    const ingot_tensor_desc& param = c.in[k];
    const ingot_tensor_desc& grad = c.in[k + 1];
    const ingot_tensor_desc& buf = c.in[k + 2];
    expect_same_shape(c, param, grad, "param", "grad");
    const bool use_buf = a.momentum != 0.0;  // buf may be absent or 0-size without momentum
    if (use_buf) expect_same_shape(c, param, buf, "param", "momentum buffer");
    NdIter it(param);
    const int ip = it.add(param.strides);
    const int ig = it.add(grad.strides);
    const int ib = use_buf ? it.add(buf.strides) : ip;
    void* p = sdk::data_ptr(param);
    const void* g = sdk::data_ptr(grad);
    void* b = use_buf ? sdk::data_ptr(buf) : nullptr;
    for (; !it.done(); it.next()) {
      const double w = load_as<double>(p, param.dtype, it[ip]);
      double d = load_as<double>(g, grad.dtype, it[ig]) + a.weight_decay * w;
      if (use_buf) {
        double m = a.first_step ? d : a.momentum * load_as<double>(b, buf.dtype, it[ib]) + (1.0 - a.dampening) * d;
        store_as<double>(b, buf.dtype, it[ib], m);
        m = load_as<double>(b, buf.dtype, it[ib]);  // continue with the stored (rounded) buffer, like torch
        d = a.nesterov ? d + a.momentum * m : m;
      }
      store_as<double>(p, param.dtype, it[ip], w - a.lr * d);
    }
  }
}

void run_adam_update(const sdk::OpCall& c) {
  const auto& a = sdk::attr<ingot_attr_adam>(c.attrs);
  const int per = a.amsgrad ? 5 : 4;
  if (c.n_in % per != 0 || c.n_out != 0) {
    fail(
        "adam_update: expects groups of {} inputs (param, grad, exp_avg, exp_avg_sq{}) and no outputs, got {} "
        "inputs and {} outputs",
        per, a.amsgrad ? ", max_exp_avg_sq" : "", c.n_in, c.n_out);
  }
  if (a.step < 1) fail("adam_update: step is {}, expected the 1-based number of this update", a.step);
  const double step = static_cast<double>(a.step);
  const double bias1 = 1.0 - std::pow(a.beta1, step);
  const double bias2_sqrt = std::sqrt(1.0 - std::pow(a.beta2, step));
  const double step_size = a.lr / bias1;
  for (int k = 0; k < c.n_in; k += per) {
    const ingot_tensor_desc& param = c.in[k];
    static const char* const kNames[] = {"param", "grad", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"};
    for (int j = 1; j < per; ++j) expect_same_shape(c, param, c.in[k + j], "param", kNames[j]);
    NdIter it(param);
    int idx[5];
    void* ptr[5];
    for (int j = 0; j < per; ++j) {
      idx[j] = it.add(c.in[k + j].strides);
      ptr[j] = sdk::data_ptr(c.in[k + j]);
    }
    const int32_t dt[5] = {param.dtype, c.in[k + 1].dtype, c.in[k + 2].dtype, c.in[k + 3].dtype,
                           per == 5 ? c.in[k + 4].dtype : param.dtype};
    // torch's order: each in-place tensor op rounds to the storage dtype; the reloads below keep
    // that rounding so that f32 trajectories follow torch's.
    for (; !it.done(); it.next()) {
      double w = load_as<double>(ptr[0], dt[0], it[idx[0]]);
      double g = load_as<double>(ptr[1], dt[1], it[idx[1]]);
      if (a.decoupled) {
        w *= 1.0 - a.lr * a.weight_decay;
      } else {
        g += a.weight_decay * w;
      }
      const double m = a.beta1 * load_as<double>(ptr[2], dt[2], it[idx[2]]) + (1.0 - a.beta1) * g;
      const double v = a.beta2 * load_as<double>(ptr[3], dt[3], it[idx[3]]) + (1.0 - a.beta2) * g * g;
      store_as<double>(ptr[2], dt[2], it[idx[2]], m);
      store_as<double>(ptr[3], dt[3], it[idx[3]], v);
      const double m_r = load_as<double>(ptr[2], dt[2], it[idx[2]]);
      double v_r = load_as<double>(ptr[3], dt[3], it[idx[3]]);
      if (per == 5) {
        v_r = std::max(v_r, load_as<double>(ptr[4], dt[4], it[idx[4]]));
        store_as<double>(ptr[4], dt[4], it[idx[4]], v_r);
      }
      const double denom = std::sqrt(v_r) / bias2_sqrt + a.eps;
      store_as<double>(ptr[0], dt[0], it[idx[0]], w - step_size * m_r / denom);
    }
  }
}

namespace {

// The call without its leading hyper tensor, with `a`'s lr (and step) taken from it.
template <class A>
void run_with_hyper(const sdk::OpCall& c, const char* name, void (*run)(const sdk::OpCall&)) {
  if (c.n_in < 1) fail("{}: expects the hyper-parameter tensor [lr, step] first, got no inputs", name);
  const ingot_tensor_desc& h = c.in[0];
  if (h.dtype != INGOT_F64 || sdk::numel(h) != 2 || !sdk::is_contiguous(h))
    fail("{}: input 0 {} {} must be a contiguous float64 [2] tensor [lr, step]", name, sdk::dtype_label(h.dtype),
         shape_str(h));
  const double* v = sdk::data_ptr<const double>(h);
  A a = sdk::attr<A>(c.attrs);
  a.lr = v[0];
  if constexpr (std::is_same_v<A, ingot_attr_adam>) a.step = static_cast<int64_t>(v[1]);
  sdk::OpCall rest = c;
  rest.in = c.in + 1;
  rest.n_in = c.n_in - 1;
  rest.attrs = &a;
  run(rest);
}

}  // namespace

void run_sgd_update_capturable(const sdk::OpCall& c) {
  run_with_hyper<ingot_attr_sgd>(c, "sgd_update_capturable", &run_sgd_update);
}

void run_adam_update_capturable(const sdk::OpCall& c) {
  run_with_hyper<ingot_attr_adam>(c, "adam_update_capturable", &run_adam_update);
}

}  // namespace ingot::reference
