// QUANTIZE, DEQUANTIZE, QLINEAR and QCONV2D as plain loops: the oracle every backend's int8
// kernels are compared with. Products accumulate exactly (in int64, stored as int32 like the
// op table's i32 accumulator); the f32 epilogue is computed in double and rounded once.
#include <algorithm>
#include <cmath>
#include <vector>

#include "backends/reference/check.h"
#include "backends/reference/dense_io.h"
#include "backends/reference/kernels.h"

namespace ingot::reference {

namespace {

bool is_q8(int32_t dtype) { return dtype == INGOT_U8 || dtype == INGOT_I8; }

int32_t q_lo(int32_t dtype) { return dtype == INGOT_U8 ? 0 : -128; }
int32_t q_hi(int32_t dtype) { return dtype == INGOT_U8 ? 255 : 127; }

// A (scale, zero_point) pair of inputs: one value each (per tensor) or `channels` of each.
struct Params {
  std::vector<double> scale, zero_point;
  float scale_at(int64_t ch) const { return static_cast<float>(scale[scale.size() == 1 ? 0 : ch]); }
  int32_t zero_point_at(int64_t ch) const { return static_cast<int32_t>(zero_point[zero_point.size() == 1 ? 0 : ch]); }
};

Params read_params(const sdk::OpCall& c, int index, int64_t channels, const char* what) {
  const ingot_tensor_desc& s = c.in[index];
  const ingot_tensor_desc& z = c.in[index + 1];
  expect_dtype(c, s, INGOT_F32, what);
  expect_dtype(c, z, INGOT_I32, what);
  const int64_t n = sdk::numel(s);
  if (n != sdk::numel(z) || (n != 1 && n != channels)) {
    fail("{}: {} scale {} and zero point {} must hold 1 or {} values", op_name(c.op), what, shape_str(s), shape_str(z),
         channels);
  }
  return {read_f64(s), read_f64(z)};
}

// torch's (fbgemm's) rounding: nearbyint(x * (1 / scale)) in f32, ties to even, then + zero point
// and clamp. NaN quantizes to the zero point (torch leaves it undefined).
double quantize_value(float x, float scale, int32_t zero_point, int32_t lo, int32_t hi) {
  const float scaled = x * (1.0f / scale);
  const double q = std::isnan(scaled) ? zero_point : static_cast<double>(std::nearbyint(scaled)) + zero_point;
  return std::clamp(q, static_cast<double>(lo), static_cast<double>(hi));
}

// Size of the channel axis and the number of elements after it (row-major), per-tensor: (1, 1).
struct ChannelWalk {
  int64_t channels = 1, inner = 1;
  int64_t channel_of(int64_t i) const { return (i / inner) % channels; }
};

ChannelWalk channel_walk(const sdk::OpCall& c, const ingot_tensor_desc& t, int64_t n_params) {
  if (n_params == 1) return {};
  const auto& a = sdk::attr<ingot_attr_quantize>(c.attrs);
  const int axis = wrap_axis(c, a.axis, t.ndim);
  ChannelWalk w;
  w.channels = t.ndim > 0 ? t.shape[axis] : 1;
  for (int d = axis + 1; d < t.ndim; ++d) w.inner *= t.shape[d];
  return w;
}

// The epilogue of QLINEAR / QCONV2D for one output channel's accumulator, by output dtype.
struct Epilogue {
  int32_t dtype = INGOT_F32;
  int32_t activation = INGOT_ACT_NONE;
  float x_scale = 1.0f;
  Params w;
  std::vector<double> bias;  // empty: no bias
  float y_scale = 1.0f;
  int32_t y_zero_point = 0;

  double operator()(int64_t acc, int64_t ch) const {
    const auto acc32 = static_cast<int32_t>(acc);  // the op table's i32 accumulator (wraps)
    if (dtype == INGOT_I32) return acc32;
    double v = acc32 * (static_cast<double>(x_scale) * w.scale_at(ch));
    if (!bias.empty()) v += bias[static_cast<size_t>(ch)];
    const auto real = static_cast<float>(apply_activation(activation, v));
    if (dtype == INGOT_F32) return real;
    return quantize_value(real, y_scale, y_zero_point, q_lo(dtype), q_hi(dtype));
  }
};

// Checks the operands common to QLINEAR and QCONV2D (x, its params, w, its params, bias, output
// params; `channels` outputs) and builds the epilogue.
Epilogue operands(const sdk::OpCall& c, int32_t has_bias, int32_t activation, int64_t channels) {
  const int32_t out = c.out[0].dtype;
  if (out != INGOT_F32 && out != INGOT_I32 && !is_q8(out)) {
    fail("{}: output dtype {} (f32, i32, u8 or i8)", op_name(c.op), sdk::dtype_label(out));
  }
  expect_arity(c, 6 + (has_bias ? 1 : 0) + (is_q8(out) ? 2 : 0), 1);
  if (!is_q8(c.in[0].dtype))
    fail("{}: x is {}, expected uint8 or int8", op_name(c.op), sdk::dtype_label(c.in[0].dtype));
  expect_dtype(c, c.in[3], INGOT_I8, "w");
  if (out == INGOT_I32 && (has_bias || activation != INGOT_ACT_NONE)) {
    fail("{}: an int32 output takes no bias and no activation", op_name(c.op));
  }
  Epilogue e;
  e.dtype = out;
  e.activation = activation;
  const Params x = read_params(c, 1, 1, "x");
  if (x.scale.size() != 1) fail("{}: x must be quantized per tensor", op_name(c.op));
  e.x_scale = x.scale_at(0);
  e.w = read_params(c, 4, channels, "w");
  if (has_bias) {
    expect_dtype(c, c.in[6], INGOT_F32, "bias");
    e.bias = read_f64(c.in[6]);
    if (static_cast<int64_t>(e.bias.size()) != channels) {
      fail("{}: bias {} for {} output channels", op_name(c.op), shape_str(c.in[6]), channels);
    }
  }
  if (is_q8(out)) {
    const Params y = read_params(c, c.n_in - 2, 1, "y");
    if (y.scale.size() != 1) fail("{}: the output must be quantized per tensor", op_name(c.op));
    e.y_scale = y.scale_at(0);
    e.y_zero_point = y.zero_point_at(0);
  }
  return e;
}

// q - zero_point of every element of a per-tensor x, or of w per output channel (dim 0).
std::vector<int64_t> centered(const ingot_tensor_desc& t, const Params& p) {
  const std::vector<double> v = read_f64(t);
  const int64_t per_channel = t.ndim > 0 && t.shape[0] > 0 ? static_cast<int64_t>(v.size()) / t.shape[0] : 1;
  std::vector<int64_t> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    out[i] = static_cast<int64_t>(v[i]) - p.zero_point_at(static_cast<int64_t>(i) / per_channel);
  }
  return out;
}

}  // namespace

void run_quantize(const sdk::OpCall& c) {
  expect_arity(c, 3, 1);
  const ingot_tensor_desc& x = c.in[0];
  const ingot_tensor_desc& y = c.out[0];
  if (!is_q8(y.dtype)) fail("quantize: output dtype {} (uint8 or int8)", sdk::dtype_label(y.dtype));
  expect_same_shape(c, x, y, "x", "output");
  const auto& a = sdk::attr<ingot_attr_quantize>(c.attrs);
  if (a.quant_min < q_lo(y.dtype) || a.quant_min > a.quant_max || a.quant_max > q_hi(y.dtype)) {
    fail("quantize: quant range [{}, {}] outside {}", a.quant_min, a.quant_max, sdk::dtype_label(y.dtype));
  }
  const ChannelWalk walk = channel_walk(c, x, sdk::numel(c.in[1]));
  const Params p = read_params(c, 1, walk.channels, "x");
  std::vector<double> v = read_f64(x);
  for (size_t i = 0; i < v.size(); ++i) {
    const int64_t ch = walk.channel_of(static_cast<int64_t>(i));
    v[i] = quantize_value(static_cast<float>(v[i]), p.scale_at(ch), p.zero_point_at(ch), a.quant_min, a.quant_max);
  }
  write_f64(y, v);
}

void run_dequantize(const sdk::OpCall& c) {
  expect_arity(c, 3, 1);
  expect_dtype(c, c.out[0], INGOT_F32, "output");
  expect_same_shape(c, c.in[0], c.out[0], "q", "output");
  const ChannelWalk walk = channel_walk(c, c.in[0], sdk::numel(c.in[1]));
  const Params p = read_params(c, 1, walk.channels, "q");
  std::vector<double> v = read_f64(c.in[0]);
  for (size_t i = 0; i < v.size(); ++i) {
    const int64_t ch = walk.channel_of(static_cast<int64_t>(i));
    v[i] = static_cast<float>((v[i] - p.zero_point_at(ch)) * p.scale_at(ch));  // one rounding to f32
  }
  write_f64(c.out[0], v);
}

void run_qlinear(const sdk::OpCall& c) {
  const auto& attr = sdk::attr<ingot_attr_matmul>(c.attrs);
  if (c.n_in < 6 || c.n_out != 1) fail("qlinear: {} inputs and {} outputs", c.n_in, c.n_out);
  const ingot_tensor_desc& x = c.in[0];
  const ingot_tensor_desc& w = c.in[3];
  const ingot_tensor_desc& y = c.out[0];
  if (w.ndim != 2 || x.ndim < 1 || x.shape[x.ndim - 1] != w.shape[1] || y.ndim != x.ndim ||
      y.shape[y.ndim - 1] != w.shape[0]) {
    fail("qlinear: x {} and w {} do not give output {}", shape_str(x), shape_str(w), shape_str(y));
  }
  for (int d = 0; d + 1 < x.ndim; ++d) {
    if (x.shape[d] != y.shape[d]) fail("qlinear: x {} and output {} differ in batch dims", shape_str(x), shape_str(y));
  }
  const int64_t n = w.shape[0], k = w.shape[1];
  const Epilogue epilogue = operands(c, attr.has_bias, attr.activation, n);
  const std::vector<int64_t> xs = centered(x, read_params(c, 1, 1, "x"));
  const std::vector<int64_t> ws = centered(w, epilogue.w);
  const int64_t rows = k > 0 ? static_cast<int64_t>(xs.size()) / k : sdk::numel(y) / std::max<int64_t>(n, 1);
  std::vector<double> out(static_cast<size_t>(rows * n));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < n; ++j) {
      int64_t acc = 0;
      for (int64_t p = 0; p < k; ++p) acc += xs[r * k + p] * ws[j * k + p];
      out[r * n + j] = epilogue(acc, j);
    }
  }
  write_f64(y, out);
}

void run_qconv2d(const sdk::OpCall& c) {
  const auto& a = sdk::attr<ingot_attr_conv2d>(c.attrs);
  if (c.n_in < 6 || c.n_out != 1) fail("qconv2d: {} inputs and {} outputs", c.n_in, c.n_out);
  const ingot_tensor_desc& x = c.in[0];
  const ingot_tensor_desc& w = c.in[3];
  const ingot_tensor_desc& y = c.out[0];
  if (x.ndim != 4 || w.ndim != 4 || y.ndim != 4) {
    fail("qconv2d: x {}, w {} and y {} must be 4-d (NCHW, OIHW)", shape_str(x), shape_str(w), shape_str(y));
  }
  const int64_t n = x.shape[0], ci = x.shape[1], h = x.shape[2], wd = x.shape[3];
  const int64_t o = w.shape[0], kh = w.shape[2], kw = w.shape[3], oh = y.shape[2], ow = y.shape[3];
  const int64_t g = a.groups;
  const bool attrs_ok = g >= 1 && a.stride[0] >= 1 && a.stride[1] >= 1 && a.dilation[0] >= 1 && a.dilation[1] >= 1 &&
                        a.padding[0] >= 0 && a.padding[1] >= 0;
  if (!attrs_ok || ci % g != 0 || o % g != 0 || w.shape[1] != ci / g || y.shape[0] != n || y.shape[1] != o ||
      oh != (h + 2 * a.padding[0] - a.dilation[0] * (kh - 1) - 1) / a.stride[0] + 1 ||
      ow != (wd + 2 * a.padding[1] - a.dilation[1] * (kw - 1) - 1) / a.stride[1] + 1) {
    fail("qconv2d: x {}, w {} and y {} do not fit groups {} stride [{}, {}] padding [{}, {}] dilation [{}, {}]",
         shape_str(x), shape_str(w), shape_str(y), g, a.stride[0], a.stride[1], a.padding[0], a.padding[1],
         a.dilation[0], a.dilation[1]);
  }
  const Epilogue epilogue = operands(c, a.has_bias, a.activation, o);
  const std::vector<int64_t> xs = centered(x, read_params(c, 1, 1, "x"));
  const std::vector<int64_t> ws = centered(w, epilogue.w);
  const int64_t cg = ci / g, og = o / g;
  std::vector<double> out(static_cast<size_t>(sdk::numel(y)));
  // Taps outside the input are padding: real value 0, quantized x_zero_point, so they add nothing.
  for (int64_t b = 0; b < n; ++b)
    for (int64_t oc = 0; oc < o; ++oc)
      for (int64_t oy = 0; oy < oh; ++oy)
        for (int64_t ox = 0; ox < ow; ++ox) {
          int64_t acc = 0;
          for (int64_t ic = 0; ic < cg; ++ic) {
            const int64_t xc = oc / og * cg + ic;
            for (int64_t ky = 0; ky < kh; ++ky) {
              const int64_t iy = oy * a.stride[0] - a.padding[0] + ky * a.dilation[0];
              if (iy < 0 || iy >= h) continue;
              for (int64_t kx = 0; kx < kw; ++kx) {
                const int64_t ix = ox * a.stride[1] - a.padding[1] + kx * a.dilation[1];
                if (ix < 0 || ix >= wd) continue;
                acc += xs[((b * ci + xc) * h + iy) * wd + ix] * ws[((oc * cg + ic) * kh + ky) * kw + kx];
              }
            }
          }
          out[((b * o + oc) * oh + oy) * ow + ox] = epilogue(acc, oc);
        }
  write_f64(y, out);
}

}  // namespace ingot::reference
