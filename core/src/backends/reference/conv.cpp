// CONV2D (x NCHW, w [O, C/groups, kh, kw], optional bias [O], relu/gelu post-op) and its data
// and weight gradients, as direct loops over dense double buffers.
#include <vector>

#include "backends/reference/check.h"
#include "backends/reference/dense_io.h"
#include "backends/reference/kernels.h"

namespace ingot::reference {

namespace {

// Sizes of one convolution, checked against the attributes: x [n, c, h, w] * w [o, c/g, kh, kw]
// -> y [n, o, oh, ow].
struct ConvGeometry {
  int64_t n, c, h, w, o, kh, kw, oh, ow, groups, cg, og;
  int64_t sh, sw, ph, pw, dh, dw;

  // Index of input row/column for output position `out` and kernel tap `tap` (may be outside).
  int64_t in_row(int64_t out, int64_t tap) const { return out * sh - ph + tap * dh; }
  int64_t in_col(int64_t out, int64_t tap) const { return out * sw - pw + tap * dw; }
};

ConvGeometry geometry(const sdk::OpCall& c, const ingot_tensor_desc& x, const ingot_tensor_desc& w,
                      const ingot_tensor_desc& y) {
  const auto& a = sdk::attr<ingot_attr_conv2d>(c.attrs);
  if (x.ndim != 4 || w.ndim != 4 || y.ndim != 4) {
    fail("{}: x {}, w {} and y {} must be 4-d (NCHW, OIHW)", op_name(c.op), shape_str(x), shape_str(w), shape_str(y));
  }
  ConvGeometry g{};
  g.n = x.shape[0], g.c = x.shape[1], g.h = x.shape[2], g.w = x.shape[3];
  g.o = w.shape[0], g.kh = w.shape[2], g.kw = w.shape[3];
  g.oh = y.shape[2], g.ow = y.shape[3];
  g.groups = a.groups;
  g.sh = a.stride[0], g.sw = a.stride[1], g.ph = a.padding[0], g.pw = a.padding[1];
  g.dh = a.dilation[0], g.dw = a.dilation[1];
  if (g.groups < 1 || g.sh < 1 || g.sw < 1 || g.dh < 1 || g.dw < 1 || g.ph < 0 || g.pw < 0) {
    fail("{}: bad attributes groups {} stride [{}, {}] padding [{}, {}] dilation [{}, {}]", op_name(c.op), g.groups,
         g.sh, g.sw, g.ph, g.pw, g.dh, g.dw);
  }
  g.cg = g.c / g.groups;
  g.og = g.o / g.groups;
  const int64_t want_oh = (g.h + 2 * g.ph - g.dh * (g.kh - 1) - 1) / g.sh + 1;
  const int64_t want_ow = (g.w + 2 * g.pw - g.dw * (g.kw - 1) - 1) / g.sw + 1;
  if (g.c % g.groups != 0 || g.o % g.groups != 0 || w.shape[1] != g.cg || y.shape[0] != g.n || y.shape[1] != g.o ||
      g.oh != want_oh || g.ow != want_ow) {
    fail("{}: x {}, w {} and y {} do not fit groups {} stride [{}, {}] padding [{}, {}] dilation [{}, {}]",
         op_name(c.op), shape_str(x), shape_str(w), shape_str(y), g.groups, g.sh, g.sw, g.ph, g.pw, g.dh, g.dw);
  }
  return g;
}

// Calls fn(x_index, w_index, y_index) for every product term of the convolution, in dense
// row-major indices of x, w and y; the three ops differ only in which side accumulates.
template <class Fn>
void for_each_term(const ConvGeometry& g, Fn&& fn) {
  for (int64_t b = 0; b < g.n; ++b)
    for (int64_t oc = 0; oc < g.o; ++oc) {
      const int64_t group = oc / g.og;
      for (int64_t oy = 0; oy < g.oh; ++oy)
        for (int64_t ox = 0; ox < g.ow; ++ox) {
          const int64_t yi = ((b * g.o + oc) * g.oh + oy) * g.ow + ox;
          for (int64_t ic = 0; ic < g.cg; ++ic) {
            const int64_t xc = group * g.cg + ic;
            for (int64_t ky = 0; ky < g.kh; ++ky) {
              const int64_t iy = g.in_row(oy, ky);
              if (iy < 0 || iy >= g.h) continue;
              for (int64_t kx = 0; kx < g.kw; ++kx) {
                const int64_t ix = g.in_col(ox, kx);
                if (ix < 0 || ix >= g.w) continue;
                fn(((b * g.c + xc) * g.h + iy) * g.w + ix, ((oc * g.cg + ic) * g.kh + ky) * g.kw + kx, yi);
              }
            }
          }
        }
    }
}

void expect_same_dtypes(const sdk::OpCall& c) {
  for (int i = 0; i < c.n_in; ++i) expect_dtype(c, c.in[i], c.out[0].dtype, "input");
}

}  // namespace

void run_conv2d(const sdk::OpCall& c) {
  const auto& a = sdk::attr<ingot_attr_conv2d>(c.attrs);
  expect_arity(c, a.has_bias ? 3 : 2, 1);
  expect_same_dtypes(c);
  const ConvGeometry g = geometry(c, c.in[0], c.in[1], c.out[0]);
  const std::vector<double> x = read_f64(c.in[0]);
  const std::vector<double> w = read_f64(c.in[1]);
  std::vector<double> y(static_cast<size_t>(sdk::numel(c.out[0])), 0.0);
  for_each_term(g, [&](int64_t xi, int64_t wi, int64_t yi) { y[yi] += x[xi] * w[wi]; });
  std::vector<double> bias;
  if (a.has_bias) {
    bias = read_f64(c.in[2]);
    if (static_cast<int64_t>(bias.size()) != g.o)
      fail("conv2d: bias {} for {} output channels", shape_str(c.in[2]), g.o);
  }
  const int64_t plane = g.oh * g.ow;
  for (size_t i = 0; i < y.size(); ++i) {
    const int64_t channel = (static_cast<int64_t>(i) / plane) % g.o;
    y[i] += a.has_bias ? bias[channel] : 0.0;
  }
  activate_as_stored(c, c.out[0].dtype, a.activation, y);
  write_f64(c.out[0], y);
}

void run_conv2d_bwd_data(const sdk::OpCall& c) {
  expect_arity(c, 2, 1);
  expect_same_dtypes(c);
  const ConvGeometry g = geometry(c, c.out[0], c.in[1], c.in[0]);
  const std::vector<double> gy = read_f64(c.in[0]);
  const std::vector<double> w = read_f64(c.in[1]);
  std::vector<double> gx(static_cast<size_t>(sdk::numel(c.out[0])), 0.0);
  for_each_term(g, [&](int64_t xi, int64_t wi, int64_t yi) { gx[xi] += gy[yi] * w[wi]; });
  write_f64(c.out[0], gx);
}

void run_conv2d_bwd_weight(const sdk::OpCall& c) {
  expect_arity(c, 2, 1);
  expect_same_dtypes(c);
  const ConvGeometry g = geometry(c, c.in[0], c.out[0], c.in[1]);
  const std::vector<double> x = read_f64(c.in[0]);
  const std::vector<double> gy = read_f64(c.in[1]);
  std::vector<double> gw(static_cast<size_t>(sdk::numel(c.out[0])), 0.0);
  for_each_term(g, [&](int64_t xi, int64_t wi, int64_t yi) { gw[wi] += x[xi] * gy[yi]; });
  write_f64(c.out[0], gw);
}

}  // namespace ingot::reference
