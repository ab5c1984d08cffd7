// Multi-tensor optimizer ops: GLOBAL_NORM (sqrt of the sum of squares over every input, in
// double, written as one value) and SGD_UPDATE over (param, grad, momentum_buf) triples with
// torch.optim.SGD's semantics, updating params and buffers in place.
#include <cmath>

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
    if (!is_float_dtype(t.dtype)) fail("global_norm: input {} is {}, expected floating point", k, dtype_str(t.dtype));
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

}  // namespace ingot::reference
