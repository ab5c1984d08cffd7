// 2-d max and average pooling over the last two dims (NCHW or CHW) with torch's output-size,
// ceil_mode, padding and divisor rules, and their backward ops. MAX_POOL2D's workspace holds
// torch's indices: the flat position h * W + w of each window's maximum in its input plane.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "backends/reference/check.h"
#include "backends/reference/dense_io.h"
#include "backends/reference/kernels.h"

namespace ingot::reference {

namespace {

struct PoolGeometry {
  int64_t planes, h, w, oh, ow, kh, kw, sh, sw, ph, pw;
  bool ceil_mode, count_include_pad;
};

// torch's pooling_output_shape (dilation 1): with ceil_mode the last window must start inside
// the input or its left padding.
int64_t pooled_size(int64_t in, int64_t k, int64_t pad, int64_t stride, bool ceil_mode) {
  const int64_t num = in + 2 * pad - (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  int64_t out = (num >= 0 ? num / stride : -((-num + stride - 1) / stride)) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

// x is the pooling's input (or grad_x), y its output (or grad_y).
PoolGeometry geometry(const sdk::OpCall& c, const ingot_tensor_desc& x, const ingot_tensor_desc& y) {
  const auto& a = sdk::attr<ingot_attr_pool2d>(c.attrs);
  if (x.ndim < 3 || x.ndim > 4 || y.ndim != x.ndim) {
    fail("{}: input {} and output {} must both be NCHW or CHW", op_name(c.op), shape_str(x), shape_str(y));
  }
  PoolGeometry g{};
  g.h = x.shape[x.ndim - 2], g.w = x.shape[x.ndim - 1];
  g.oh = y.shape[y.ndim - 2], g.ow = y.shape[y.ndim - 1];
  g.kh = a.kernel[0], g.kw = a.kernel[1];
  g.sh = a.stride[0] > 0 ? a.stride[0] : g.kh;  // stride 0 means "the kernel size", torch's default
  g.sw = a.stride[1] > 0 ? a.stride[1] : g.kw;
  g.ph = a.padding[0], g.pw = a.padding[1];
  g.ceil_mode = a.ceil_mode != 0;
  g.count_include_pad = a.count_include_pad != 0;
  g.planes = 1;
  bool ok = true;
  for (int d = 0; d < x.ndim - 2; ++d) {
    g.planes *= x.shape[d];
    ok = ok && x.shape[d] == y.shape[d];
  }
  if (g.kh < 1 || g.kw < 1 || g.ph < 0 || g.pw < 0 || g.ph > g.kh / 2 || g.pw > g.kw / 2) {
    fail("{}: kernel [{}, {}] with padding [{}, {}] (padding must be at most half the kernel)", op_name(c.op), g.kh,
         g.kw, g.ph, g.pw);
  }
  ok = ok && g.oh == pooled_size(g.h, g.kh, g.ph, g.sh, g.ceil_mode) &&
       g.ow == pooled_size(g.w, g.kw, g.pw, g.sw, g.ceil_mode);
  if (!ok) {
    fail("{}: input {} does not pool to {} with kernel [{}, {}] stride [{}, {}] padding [{}, {}] ceil_mode {}",
         op_name(c.op), shape_str(x), shape_str(y), g.kh, g.kw, g.sh, g.sw, g.ph, g.pw, a.ceil_mode);
  }
  return g;
}

// Average pooling window of output (oy, ox): the clipped input rectangle and torch's divisor.
struct AvgWindow {
  int64_t y0, y1, x0, x1;
  double divisor;
};

AvgWindow avg_window(const PoolGeometry& g, int64_t oy, int64_t ox) {
  int64_t y0 = oy * g.sh - g.ph, x0 = ox * g.sw - g.pw;
  int64_t y1 = std::min(y0 + g.kh, g.h + g.ph), x1 = std::min(x0 + g.kw, g.w + g.pw);
  const int64_t padded_area = (y1 - y0) * (x1 - x0);
  y0 = std::max<int64_t>(y0, 0), x0 = std::max<int64_t>(x0, 0);
  y1 = std::min(y1, g.h), x1 = std::min(x1, g.w);
  const int64_t area = (y1 - y0) * (x1 - x0);
  return {y0, y1, x0, x1, static_cast<double>(g.count_include_pad ? padded_area : area)};
}

}  // namespace

void run_max_pool2d(const sdk::OpCall& c) {
  expect_arity(c, 1, 2);
  expect_dtype(c, c.out[0], c.in[0].dtype, "output");
  expect_dtype(c, c.out[1], INGOT_I64, "workspace");
  expect_same_shape(c, c.out[0], c.out[1], "output", "workspace");
  const PoolGeometry g = geometry(c, c.in[0], c.out[0]);
  const std::vector<double> x = read_f64(c.in[0]);
  std::vector<double> y(static_cast<size_t>(sdk::numel(c.out[0])));
  std::vector<double> index(y.size());
  size_t k = 0;
  for (int64_t p = 0; p < g.planes; ++p) {
    const double* plane = x.data() + p * g.h * g.w;
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      for (int64_t ox = 0; ox < g.ow; ++ox, ++k) {
        const int64_t y0 = std::max<int64_t>(oy * g.sh - g.ph, 0), y1 = std::min(oy * g.sh - g.ph + g.kh, g.h);
        const int64_t x0 = std::max<int64_t>(ox * g.sw - g.pw, 0), x1 = std::min(ox * g.sw - g.pw + g.kw, g.w);
        // torch: start at the window's first element with -inf; a NaN always takes over
        double best = -std::numeric_limits<double>::infinity();
        int64_t best_index = y0 * g.w + x0;
        for (int64_t iy = y0; iy < y1; ++iy) {
          for (int64_t ix = x0; ix < x1; ++ix) {
            const double v = plane[iy * g.w + ix];
            if (v > best || std::isnan(v)) {
              best = v;
              best_index = iy * g.w + ix;
            }
          }
        }
        y[k] = best;
        index[k] = static_cast<double>(best_index);
      }
    }
  }
  write_f64(c.out[0], y);
  write_f64(c.out[1], index);
}

void run_max_pool2d_bwd(const sdk::OpCall& c) {
  expect_arity(c, 3, 1);
  expect_dtype(c, c.in[2], INGOT_I64, "workspace");
  expect_dtype(c, c.out[0], c.in[0].dtype, "grad_x");
  expect_same_shape(c, c.in[0], c.in[2], "grad_y", "workspace");
  expect_same_shape(c, c.in[1], c.out[0], "x", "grad_x");
  const PoolGeometry g = geometry(c, c.out[0], c.in[0]);
  const std::vector<double> gy = read_f64(c.in[0]);
  const std::vector<double> index = read_f64(c.in[2]);
  std::vector<double> gx(static_cast<size_t>(sdk::numel(c.out[0])), 0.0);
  const int64_t per_plane = g.oh * g.ow;
  for (size_t k = 0; k < gy.size(); ++k) {
    const auto i = static_cast<int64_t>(index[k]);
    if (i < 0 || i >= g.h * g.w) fail("max_pool2d_bwd: workspace index {} outside a {}x{} plane", i, g.h, g.w);
    gx[static_cast<int64_t>(k) / per_plane * g.h * g.w + i] += gy[k];
  }
  write_f64(c.out[0], gx);
}

void run_avg_pool2d(const sdk::OpCall& c) {
  expect_arity(c, 1, 1);
  expect_dtype(c, c.out[0], c.in[0].dtype, "output");
  const PoolGeometry g = geometry(c, c.in[0], c.out[0]);
  const std::vector<double> x = read_f64(c.in[0]);
  std::vector<double> y(static_cast<size_t>(sdk::numel(c.out[0])), 0.0);
  size_t k = 0;
  for (int64_t p = 0; p < g.planes; ++p) {
    const double* plane = x.data() + p * g.h * g.w;
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      for (int64_t ox = 0; ox < g.ow; ++ox, ++k) {
        const AvgWindow win = avg_window(g, oy, ox);
        if (win.y0 >= win.y1 || win.x0 >= win.x1) continue;  // window entirely in padding: 0
        double sum = 0.0;
        for (int64_t iy = win.y0; iy < win.y1; ++iy)
          for (int64_t ix = win.x0; ix < win.x1; ++ix) sum += plane[iy * g.w + ix];
        y[k] = sum / win.divisor;
      }
    }
  }
  write_f64(c.out[0], y);
}

void run_avg_pool2d_bwd(const sdk::OpCall& c) {
  expect_arity(c, 1, 1);
  expect_dtype(c, c.out[0], c.in[0].dtype, "grad_x");
  const PoolGeometry g = geometry(c, c.out[0], c.in[0]);
  const std::vector<double> gy = read_f64(c.in[0]);
  std::vector<double> gx(static_cast<size_t>(sdk::numel(c.out[0])), 0.0);
  size_t k = 0;
  for (int64_t p = 0; p < g.planes; ++p) {
    double* plane = gx.data() + p * g.h * g.w;
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      for (int64_t ox = 0; ox < g.ow; ++ox, ++k) {
        const AvgWindow win = avg_window(g, oy, ox);
        for (int64_t iy = win.y0; iy < win.y1; ++iy)
          for (int64_t ix = win.x0; ix < win.x1; ++ix) plane[iy * g.w + ix] += gy[k] / win.divisor;
      }
    }
  }
  write_f64(c.out[0], gx);
}

}  // namespace ingot::reference
