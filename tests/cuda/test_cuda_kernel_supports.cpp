// supports() of the elementwise, reduction, softmax, pooling and norm families without a GPU:
// attribute structs that are missing or short are declined, and an optional norm tensor is
// accepted only when undefined, 0-size, or the right number of floating values on the device.
#include <catch2/catch.hpp>

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "host_desc.h"
#include "ingot/runtime/op_info.h"
#include "kernels.h"

namespace ingot::cuda {
namespace {

/// A contiguous descriptor on the cuda device (or the host), with the bytes core would report.
ingot_tensor_desc desc(std::initializer_list<int64_t> shape, int32_t dtype = INGOT_F32,
                       int32_t device = INGOT_DEVICE_CUDA) {
  ingot_tensor_desc d = test::host_desc(shape, dtype, {}, 0, device);
  d.nbytes = sdk::numel(d) * sdk::dtype_size(dtype);
  return d;
}

/// How core describes an absent optional input (an undefined Tensor).
ingot_tensor_desc undefined() {
  ingot_tensor_desc d{};
  d.struct_size = sizeof(d);
  d.abi_minor = INGOT_ABI_MINOR;
  return d;
}

template <class A>
A short_attr() {
  A a = make_attr<A>();
  a.struct_size = 8;  // the head only: an older ABI's struct
  return a;
}

bool supports(bool (*fn)(const sdk::OpCall&), int32_t op, const std::vector<ingot_tensor_desc>& in,
              const std::vector<ingot_tensor_desc>& out, const void* attrs) {
  return fn(
      sdk::OpCall{op, in.data(), static_cast<int32_t>(in.size()), out.data(), static_cast<int32_t>(out.size()), attrs});
}

TEST_CASE("cuda kernel supports: a missing or short attribute struct is declined", "[cuda]") {
  const ingot_tensor_desc x = desc({4, 6}), i64 = desc({4, 1}, INGOT_I64), img = desc({2, 3, 8, 8});
  const ingot_tensor_desc pooled = desc({2, 3, 4, 4}), pool_idx = desc({2, 3, 4, 4}, INGOT_I64);
  const ingot_tensor_desc row = desc({4}), six = desc({6});
  auto softplus = make_attr<ingot_attr_softplus>();
  softplus.beta = 1.0, softplus.threshold = 20.0;
  auto clamp = make_attr<ingot_attr_clamp>();
  clamp.has_min = 1, clamp.min = -1.0;
  auto axis = make_attr<ingot_attr_axis>();
  axis.axis = 1;
  auto pool = make_attr<ingot_attr_pool2d>();
  pool.kernel[0] = pool.kernel[1] = 2;
  auto ln = make_attr<ingot_attr_layer_norm>();
  ln.normalized_ndim = 1, ln.has_affine = 1, ln.eps = 1e-5;
  auto bn = make_attr<ingot_attr_batch_norm>();
  bn.training = 1, bn.has_affine = 1, bn.eps = 1e-5, bn.momentum = 0.1;
  const ingot_tensor_desc ch = desc({3}), bn_x = desc({4, 3, 5});
  struct Case {
    const char* what;
    bool (*fn)(const sdk::OpCall&);
    int32_t op;
    std::vector<ingot_tensor_desc> in, out;
    const void* good;
    const void* short_one;
  };
  const auto softplus_s = short_attr<ingot_attr_softplus>();
  const auto clamp_s = short_attr<ingot_attr_clamp>();
  auto axis_s = axis;
  axis_s.struct_size = sizeof(ingot_attr_axis) - 4;
  const auto pool_s = short_attr<ingot_attr_pool2d>();
  const auto ln_s = short_attr<ingot_attr_layer_norm>();
  const auto bn_s = short_attr<ingot_attr_batch_norm>();
  const std::vector<Case> cases = {
      {"softplus", unary_supports, INGOT_OP_SOFTPLUS, {x}, {x}, &softplus, &softplus_s},
      {"clamp", unary_supports, INGOT_OP_CLAMP, {x}, {x}, &clamp, &clamp_s},
      {"argmax", reduce_supports, INGOT_OP_ARGMAX, {x}, {i64}, &axis, &axis_s},
      {"softmax", softmax_supports, INGOT_OP_SOFTMAX, {x}, {x}, &axis, &axis_s},
      {"log_softmax_bwd", softmax_supports, INGOT_OP_LOG_SOFTMAX_BWD, {x, x}, {x}, &axis, &axis_s},
      {"max_pool2d", pool_supports, INGOT_OP_MAX_POOL2D, {img}, {pooled, pool_idx}, &pool, &pool_s},
      {"avg_pool2d_bwd", pool_supports, INGOT_OP_AVG_POOL2D_BWD, {pooled}, {img}, &pool, &pool_s},
      {"layer_norm", norm_supports, INGOT_OP_LAYER_NORM, {x, six, six}, {x, row, row}, &ln, &ln_s},
      {"batch_norm", norm_supports, INGOT_OP_BATCH_NORM, {bn_x, ch, ch, ch, ch}, {bn_x, ch, ch}, &bn, &bn_s},
      {"batch_norm_bwd", norm_supports, INGOT_OP_BATCH_NORM_BWD, {bn_x, bn_x, ch, ch, ch}, {bn_x, ch, ch}, &bn, &bn_s},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    CHECK(supports(c.fn, c.op, c.in, c.out, c.good));
    CHECK_FALSE(supports(c.fn, c.op, c.in, c.out, nullptr));
    CHECK_FALSE(supports(c.fn, c.op, c.in, c.out, c.short_one));
  }
  // ops without attributes stay claimed without them
  CHECK(supports(unary_supports, INGOT_OP_EXP, {x}, {x}, nullptr));
  CHECK(supports(reduce_supports, INGOT_OP_SUM, {x}, {six}, nullptr));
}

TEST_CASE("cuda kernel supports: an optional norm tensor is undefined, 0-size or the right values", "[cuda]") {
  auto bn = make_attr<ingot_attr_batch_norm>();
  bn.training = 1, bn.has_affine = 1, bn.eps = 1e-5, bn.momentum = 0.1;
  const ingot_tensor_desc x = desc({4, 3, 5}), ch = desc({3});
  const auto with_weight = [&](const ingot_tensor_desc& w, const ingot_tensor_desc& xx = desc({4, 3, 5})) {
    const ingot_tensor_desc c = desc({xx.shape[1]});
    return supports(norm_supports, INGOT_OP_BATCH_NORM, {xx, w, c, c, c}, {xx, c, c}, &bn);
  };
  CHECK(with_weight(ch));
  CHECK(with_weight(undefined()));                // no weight
  CHECK(with_weight(desc({0})));                  // 0-size: never read
  CHECK_FALSE(with_weight(desc({})));             // a real 0-dim tensor holds 1 value, not 3
  CHECK(with_weight(desc({}), desc({4, 1, 5})));  // ... which is right for 1 channel
  CHECK_FALSE(with_weight(desc({}, INGOT_F32, INGOT_DEVICE_CPU), desc({4, 1, 5})));  // but not on the host
  CHECK_FALSE(with_weight(desc({3}, INGOT_F32, INGOT_DEVICE_CPU)));
  CHECK_FALSE(with_weight(desc({3}, INGOT_I32)));
  CHECK_FALSE(with_weight(desc({4})));
  // outputs are described before they are allocated (no data): the shape decides
  ingot_tensor_desc unallocated = ch;
  unallocated.data = nullptr;
  CHECK(supports(norm_supports, INGOT_OP_BATCH_NORM, {x, ch, ch, ch, ch}, {x, unallocated, unallocated}, &bn));
  // layer norm's statistics: one value per row
  auto ln = make_attr<ingot_attr_layer_norm>();
  ln.normalized_ndim = 1, ln.has_affine = 0, ln.eps = 1e-5;
  const ingot_tensor_desc lx = desc({5, 7}), stats = desc({5, 1});
  CHECK(supports(norm_supports, INGOT_OP_LAYER_NORM, {lx, undefined(), undefined()}, {lx, stats, stats}, &ln));
  CHECK_FALSE(supports(norm_supports, INGOT_OP_LAYER_NORM, {lx, desc({}), undefined()}, {lx, stats, stats}, &ln));
  const ingot_tensor_desc one_row = desc({1, 7}), one_stat = desc({});
  CHECK(supports(norm_supports, INGOT_OP_LAYER_NORM, {one_row, undefined(), undefined()}, {one_row, one_stat, one_stat},
                 &ln));
}

}  // namespace
}  // namespace ingot::cuda
