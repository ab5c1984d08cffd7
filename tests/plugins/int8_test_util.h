// Helpers of the cpu_onednn int8 tests: integer test data as u8 / i8 / i32 tensors, values read
// back as doubles, calls on cpu_onednn (claimed always, or from an ISA level up), the exactness checks, and the
// attributes and operand lists of the quantized ops.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>
#include <vector>

#include "ingot/runtime/backend.h"
#include "ingot/runtime/dispatch.h"
#include "ingot/runtime/op_info.h"
#include "int8_oracle.h"
#include "test_support.h"

namespace ingot::test::int8 {

inline const Backend* onednn() { return test::plugin_backend_or_skip("cpu_onednn", "cpu_onednn"); }

inline std::vector<int32_t> ints(size_t n, int lo, int hi, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> d(lo, hi);
  std::vector<int32_t> v(n);
  for (auto& x : v) x = d(gen);
  return v;
}

inline std::vector<float> floats(size_t n, float lo, float hi, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(gen);
  return v;
}

/// Integer values as a u8 / i8 / i32 tensor.
inline Tensor qt(const std::vector<int32_t>& v, const Shape& s, DType dt) {
  if (dt == DType::I32) return Tensor::from_vector(v, s);
  if (dt == DType::U8) return Tensor::from_vector(std::vector<uint8_t>(v.begin(), v.end()), s);
  return Tensor::from_vector(std::vector<int8_t>(v.begin(), v.end()), s);
}
inline Tensor vec(const std::vector<float>& v) { return Tensor::from_vector(v, {static_cast<int64_t>(v.size())}); }
inline Tensor vec(const std::vector<int32_t>& v) { return Tensor::from_vector(v, {static_cast<int64_t>(v.size())}); }

/// A tensor's values in row-major order (read back strided), as doubles.
inline std::vector<double> values(const Tensor& t) {
  const Tensor c = t.strided().contiguous();
  std::vector<double> v(static_cast<size_t>(c.numel()));
  for (size_t i = 0; i < v.size(); ++i) {
    switch (c.dtype()) {
      case DType::U8:
        v[i] = c.data<uint8_t>()[i];
        break;
      case DType::I8:
        v[i] = c.data<int8_t>()[i];
        break;
      case DType::I32:
        v[i] = c.data<int32_t>()[i];
        break;
      default:
        v[i] = c.data<float>()[i];
    }
  }
  return v;
}

/// Runs `op` on cpu_onednn into a fresh strided output when it claims the call (which it must
/// from AVX-512 core up; below, oneDNN 2.6 has no int8 kernel for some grouped shapes, which then
/// run on the reference backend); nullopt when it declines.
inline std::optional<Tensor> ours_if_claimed(const Backend& be, OpKind op, const std::vector<Tensor>& in,
                                             const Shape& out, DType dt, const void* attrs) {
  Tensor y = Tensor::empty(out, dt);
  std::vector<ingot_tensor_desc> di;
  for (const Tensor& t : in) di.push_back(make_desc(t));
  const ingot_tensor_desc dy = make_desc(y);
  if (!test::claimed_from(be.supports(op, di.data(), static_cast<int>(di.size()), &dy, 1, attrs), op_info(op).name,
                          "AVX512_CORE"))
    return std::nullopt;
  run_op_on(be, op, in, {y}, attrs);
  return y;
}

/// Runs `op` on cpu_onednn, which must claim it on every CPU, into a fresh strided output.
inline Tensor ours(const Backend& be, OpKind op, const std::vector<Tensor>& in, const Shape& out, DType dt,
                   const void* attrs) {
  Tensor y = Tensor::empty(out, dt);
  std::vector<ingot_tensor_desc> di;
  for (const Tensor& t : in) di.push_back(make_desc(t));
  const ingot_tensor_desc dy = make_desc(y);
  REQUIRE(be.supports(op, di.data(), static_cast<int>(di.size()), &dy, 1, attrs));
  run_op_on(be, op, in, {y}, attrs);
  return y;
}

inline void require_equal(const std::vector<double>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", want " << want[i]);
    REQUIRE(got[i] == want[i]);
  }
}

/// Requantized outputs: each within 1, and only a few off at all (near ties).
inline void require_within_one(const std::vector<double>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  size_t off = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", want " << want[i]);
    REQUIRE(std::abs(got[i] - want[i]) <= 1.0);
    off += got[i] != want[i] ? 1 : 0;
  }
  REQUIRE(off <= 2 + got.size() / 100);
}

inline ingot_attr_quantize qattr(int axis, int32_t lo, int32_t hi) {
  auto a = make_attr<ingot_attr_quantize>();
  a.axis = axis, a.quant_min = lo, a.quant_max = hi;
  return a;
}

inline ingot_attr_matmul mattr(bool bias, bool relu) {
  auto a = make_attr<ingot_attr_matmul>();
  a.has_bias = bias ? 1 : 0;
  a.activation = relu ? INGOT_ACT_RELU : INGOT_ACT_NONE;
  return a;
}

/// QLINEAR / QCONV2D inputs after x and w: (x_scale, x_zp) ... (w_scale, w_zp)[, bias][, y params].
inline std::vector<Tensor> q_inputs(const Tensor& x, float xs, int32_t xz, const Tensor& w, const QP& wq,
                                    const Epi& e) {
  std::vector<Tensor> in = {x,         vec(std::vector<float>{xs}), vec(std::vector<int32_t>{xz}), w, vec(wq.scale),
                            vec(wq.zp)};
  if (!e.bias.empty()) in.push_back(vec(e.bias));
  if (e.kind == 2) in.push_back(vec(std::vector<float>{e.y_scale})), in.push_back(vec(std::vector<int32_t>{e.y_zp}));
  return in;
}

inline DType out_dtype(const Epi& e, DType q8) { return e.kind == 0 ? DType::F32 : e.kind == 1 ? DType::I32 : q8; }

/// Max over each k x k window (stride st, padding p: padded taps never win), NCHW.
inline std::vector<double> max_pool(const std::vector<double>& x, int64_t planes, int64_t h, int64_t w, int64_t k,
                                    int64_t st, int64_t p) {
  const int64_t oh = (h + 2 * p - k) / st + 1, ow = (w + 2 * p - k) / st + 1;
  std::vector<double> y;
  for (int64_t c = 0; c < planes; ++c)
    for (int64_t oy = 0; oy < oh; ++oy)
      for (int64_t ox = 0; ox < ow; ++ox) {
        double m = -1e30;
        for (int64_t iy = oy * st - p; iy < oy * st - p + k; ++iy)
          for (int64_t ix = ox * st - p; ix < ox * st - p + k; ++ix)
            if (iy >= 0 && iy < h && ix >= 0 && ix < w) m = std::max(m, x[static_cast<size_t>((c * h + iy) * w + ix)]);
        y.push_back(m);
      }
  return y;
}

inline std::vector<int32_t> as_ints(const std::vector<double>& v) { return std::vector<int32_t>(v.begin(), v.end()); }

inline ingot_attr_pool2d values_only_pool(int64_t k, int64_t st, int64_t p) {
  auto a = test::pool2d_attr(k, st, p, false);
  a.indices_unused = 1;
  return a;
}

}  // namespace ingot::test::int8
