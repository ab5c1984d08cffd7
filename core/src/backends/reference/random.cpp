// Philox random ops (UNIFORM, BERNOULLI, NORMAL): value i over the output's row-major index comes
// from ingot/plugin/philox.h, so every backend that uses that header draws identical numbers.
#include "backends/reference/check.h"
#include "backends/reference/dtype_dispatch.h"
#include "backends/reference/kernels.h"
#include "backends/reference/strided_iter.h"
#include "ingot/plugin/philox.h"

namespace ingot::reference {

void run_random(const sdk::OpCall& c) {
  expect_arity(c, 0, 1);
  const auto& a = sdk::attr<ingot_attr_rng>(c.attrs);
  const ingot_tensor_desc& out = c.out[0];
  if (c.op != INGOT_OP_BERNOULLI && !is_float_dtype(out.dtype)) {
    fail("{}: output is {}, expected floating point", op_name(c.op), sdk::dtype_label(out.dtype));
  }
  const bool f64 = out.dtype == INGOT_F64;
  if (out.dtype == INGOT_F32 && c.op != INGOT_OP_BERNOULLI && sdk::is_contiguous(out)) {
    // The common case (weight initialisation) without the strided walk: the same values.
    float* y = sdk::data_ptr<float>(out);
    const int64_t n = sdk::numel(out);
    const auto lo = static_cast<float>(a.a), hi = static_cast<float>(a.b);
    for (int64_t at = 0; at < n; at += 4) {
      const sdk::PhiloxBlock block = sdk::philox_block(a.seed, a.offset + static_cast<uint64_t>(at / 4));
      for (int64_t j = 0; j < 4 && at + j < n; ++j) {
        const auto lane = static_cast<unsigned>(j);
        y[at + j] = c.op == INGOT_OP_NORMAL ? lo + hi * sdk::philox_normal_float(block, lane)
                                            : sdk::philox_uniform_float(block.v[lane], lo, hi);
      }
    }
    return;
  }
  void* base = sdk::data_ptr(out);
  NdIter it(out);
  const int o = it.add(out.strides);
  sdk::PhiloxBlock block{};
  uint64_t block_counter = 0;
  for (uint64_t i = 0; !it.done(); it.next(), ++i) {
    const uint64_t counter = a.offset + i / 4;
    if (i == 0 || counter != block_counter) {
      block = sdk::philox_block(a.seed, counter);
      block_counter = counter;
    }
    const uint32_t x = block.v[i % 4];
    switch (c.op) {
      case INGOT_OP_UNIFORM:
        if (f64) {
          store_as<double>(base, out.dtype, it[o], sdk::philox_uniform_double(x, a.a, a.b));
        } else {
          store_as<float>(base, out.dtype, it[o],
                          sdk::philox_uniform_float(x, static_cast<float>(a.a), static_cast<float>(a.b)));
        }
        break;
      case INGOT_OP_BERNOULLI:
        store_as<bool>(base, out.dtype, it[o], sdk::philox_bernoulli(x, a.a));
        break;
      case INGOT_OP_NORMAL: {
        const auto lane = static_cast<unsigned>(i % 4);
        if (f64) {
          store_as<double>(base, out.dtype, it[o], a.a + a.b * sdk::philox_normal_double(block, lane));
        } else {
          const float z = sdk::philox_normal_float(block, lane);
          store_as<float>(base, out.dtype, it[o], static_cast<float>(a.a) + static_cast<float>(a.b) * z);
        }
        break;
      }
      default:
        fail("{}: not a random op", op_name(c.op));
    }
  }
}

}  // namespace ingot::reference
