// DROPOUT (x) -> (y, keep): keep_i is the BERNOULLI draw with probability 1 - p over x's row-major
// index (ingot/plugin/philox.h), y_i = keep_i ? x_i * scale : 0 with scale = 1 / (1 - p) rounded to
// the compute type (float for f32/f16/bf16, double for f64), so every backend matches bit for bit.
#include "backends/reference/check.h"
#include "backends/reference/dtype_dispatch.h"
#include "backends/reference/kernels.h"
#include "backends/reference/strided_iter.h"
#include "ingot/plugin/philox.h"

namespace ingot::reference {

void run_dropout(const sdk::OpCall& c) {
  expect_arity(c, 1, 2);
  const auto& a = sdk::attr<ingot_attr_rng>(c.attrs);
  const ingot_tensor_desc& x = c.in[0];
  const ingot_tensor_desc& y = c.out[0];
  const ingot_tensor_desc& keep = c.out[1];
  if (!is_float_dtype(x.dtype)) fail("dropout: input is {}, expected floating point", sdk::dtype_label(x.dtype));
  if (!(a.a >= 0.0 && a.a <= 1.0)) fail("dropout: p = {} is not in [0, 1]", a.a);
  expect_dtype(c, y, x.dtype, "output 0");
  expect_dtype(c, keep, INGOT_BOOL, "output 1");
  expect_same_shape(c, x, y, "input", "output 0");
  expect_same_shape(c, x, keep, "input", "output 1");
  const double keep_p = 1.0 - a.a;
  // p = 1 keeps nothing: the scale is never used (torch returns zeros).
  const double scale = keep_p > 0.0 ? 1.0 / keep_p : 0.0;
  const bool f64 = x.dtype == INGOT_F64;
  const void* xb = sdk::data_ptr(x);
  void* yb = sdk::data_ptr(y);
  void* kb = sdk::data_ptr(keep);
  NdIter it(x);
  const int ix = it.add(x.strides);
  const int iy = it.add(y.strides);
  const int ik = it.add(keep.strides);
  sdk::PhiloxBlock block{};
  for (uint64_t i = 0; !it.done(); it.next(), ++i) {
    if (i % 4 == 0) block = sdk::philox_block(a.seed, a.offset + i / 4);
    const bool k = sdk::philox_bernoulli(block.v[i % 4], keep_p);
    store_as<bool>(kb, INGOT_BOOL, it[ik], k);
    if (f64) {
      store_as<double>(yb, y.dtype, it[iy], k ? load_as<double>(xb, x.dtype, it[ix]) * scale : 0.0);
    } else {
      const float v = load_as<float>(xb, x.dtype, it[ix]);
      store_as<float>(yb, y.dtype, it[iy], k ? v * static_cast<float>(scale) : 0.0f);
    }
  }
}

}  // namespace ingot::reference
