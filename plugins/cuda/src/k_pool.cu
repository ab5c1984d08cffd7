// MAX_POOL2D (y, torch-style int64 indices h * W + w in the input plane; also of u8 / i8 values)
// and AVG_POOL2D over the last two dims of contiguous NCHW / CHW tensors, and their backward ops as
// gathers (each input element sums the windows that contain it: deterministic, no atomics). Sums
// in double.
#include "k_common.cuh"

namespace ingot::cuda {
namespace {

struct Geo {
  int64_t planes, h, w, oh, ow, kh, kw, sh, sw, ph, pw;
  int count_include_pad;
};

// Average window of output (oy, ox): clipped rectangle and torch's divisor.
__device__ __forceinline__ void avg_window(const Geo& g, int64_t oy, int64_t ox, int64_t& y0, int64_t& y1, int64_t& x0,
                                           int64_t& x1, double& divisor) {
  y0 = oy * g.sh - g.ph, x0 = ox * g.sw - g.pw;
  y1 = min(y0 + g.kh, g.h + g.ph), x1 = min(x0 + g.kw, g.w + g.pw);
  const int64_t padded = (y1 - y0) * (x1 - x0);
  y0 = max(y0, int64_t(0)), x0 = max(x0, int64_t(0));
  y1 = min(y1, g.h), x1 = min(x1, g.w);
  divisor = static_cast<double>(g.count_include_pad ? padded : (y1 - y0) * (x1 - x0));
}

template <class T>
__global__ void max_pool_kernel(const T* x, T* y, int64_t* idx, Geo g, int64_t n) {
  INGOT_GRID_STRIDE(k, n) {
    const int64_t ox = k % g.ow, oy = k / g.ow % g.oh, p = k / (g.ow * g.oh);
    const T* plane = x + p * g.h * g.w;
    const int64_t y0 = max(oy * g.sh - g.ph, int64_t(0)), y1 = min(oy * g.sh - g.ph + g.kh, g.h);
    const int64_t x0 = max(ox * g.sw - g.pw, int64_t(0)), x1 = min(ox * g.sw - g.pw + g.kw, g.w);
    double best = -INFINITY;
    int64_t best_index = y0 * g.w + x0;
    for (int64_t iy = y0; iy < y1; ++iy)
      for (int64_t ix = x0; ix < x1; ++ix) {
        const double v = cvt<double>(plane[iy * g.w + ix]);
        if (v > best || v != v) best = v, best_index = iy * g.w + ix;
      }
    y[k] = cvt<T>(best);
    idx[k] = best_index;
  }
}

template <class T>
__global__ void avg_pool_kernel(const T* x, T* y, Geo g, int64_t n) {
  INGOT_GRID_STRIDE(k, n) {
    const int64_t ox = k % g.ow, oy = k / g.ow % g.oh, p = k / (g.ow * g.oh);
    int64_t y0, y1, x0, x1;
    double div;
    avg_window(g, oy, ox, y0, y1, x0, x1, div);
    double s = 0.0;
    for (int64_t iy = y0; iy < y1; ++iy)
      for (int64_t ix = x0; ix < x1; ++ix) s += cvt<double>(x[p * g.h * g.w + iy * g.w + ix]);
    y[k] = cvt<T>(y0 >= y1 || x0 >= x1 ? 0.0 : s / div);
  }
}

// Output rows (or columns) whose window may contain input position i.
__device__ __forceinline__ void covering(int64_t i, int64_t pad, int64_t k, int64_t s, int64_t n_out, int64_t& lo,
                                         int64_t& hi) {
  const int64_t a = i + pad - k + 1;
  lo = a <= 0 ? 0 : (a + s - 1) / s;
  hi = min((i + pad) / s, n_out - 1);
}

template <class T>
__global__ void pool_bwd_kernel(const T* gy, const int64_t* idx, T* gx, Geo g, int64_t n, int is_max) {
  INGOT_GRID_STRIDE(i, n) {
    const int64_t ix = i % g.w, iy = i / g.w % g.h, p = i / (g.w * g.h);
    int64_t oy0, oy1, ox0, ox1;
    covering(iy, g.ph, g.kh, g.sh, g.oh, oy0, oy1);
    covering(ix, g.pw, g.kw, g.sw, g.ow, ox0, ox1);
    double s = 0.0;
    for (int64_t oy = oy0; oy <= oy1; ++oy)
      for (int64_t ox = ox0; ox <= ox1; ++ox) {
        const int64_t k = (p * g.oh + oy) * g.ow + ox;
        if (is_max) {
          if (idx[k] == iy * g.w + ix) s += cvt<double>(gy[k]);
        } else {
          int64_t y0, y1, x0, x1;
          double div;
          avg_window(g, oy, ox, y0, y1, x0, x1, div);
          if (iy >= y0 && iy < y1 && ix >= x0 && ix < x1) s += cvt<double>(gy[k]) / div;
        }
      }
    gx[i] = cvt<T>(s);
  }
}

int64_t pooled_size(int64_t in, int64_t k, int64_t pad, int64_t stride, bool ceil_mode) {
  const int64_t num = in + 2 * pad - (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  int64_t out = (num >= 0 ? num / stride : -((-num + stride - 1) / stride)) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

bool dense(const ingot_tensor_desc& d) { return is_device_strided(d) && sdk::is_contiguous(d); }

// x: the pooling's input (or grad_x), y: its output (or grad_y); false when they do not pool.
bool geometry(const ingot_attr_pool2d& a, const ingot_tensor_desc& x, const ingot_tensor_desc& y, Geo& g) {
  if (x.ndim < 3 || x.ndim > 4 || y.ndim != x.ndim) return false;
  g.h = x.shape[x.ndim - 2], g.w = x.shape[x.ndim - 1];
  g.oh = y.shape[y.ndim - 2], g.ow = y.shape[y.ndim - 1];
  g.kh = a.kernel[0], g.kw = a.kernel[1];
  g.sh = a.stride[0] > 0 ? a.stride[0] : g.kh;
  g.sw = a.stride[1] > 0 ? a.stride[1] : g.kw;
  g.ph = a.padding[0], g.pw = a.padding[1];
  g.count_include_pad = a.count_include_pad;
  g.planes = 1;
  for (int d = 0; d < x.ndim - 2; ++d) {
    if (x.shape[d] != y.shape[d]) return false;
    g.planes *= x.shape[d];
  }
  if (g.kh < 1 || g.kw < 1 || g.ph < 0 || g.pw < 0 || g.ph > g.kh / 2 || g.pw > g.kw / 2) return false;
  return g.oh == pooled_size(g.h, g.kh, g.ph, g.sh, a.ceil_mode != 0) &&
         g.ow == pooled_size(g.w, g.kw, g.pw, g.sw, a.ceil_mode != 0);
}

}  // namespace

bool pool_supports(const sdk::OpCall& c) {
  if (!has_attr<ingot_attr_pool2d>(c.attrs) || c.n_out < 1) return false;
  const auto& a = sdk::attr<ingot_attr_pool2d>(c.attrs);
  Geo g{};
  const int32_t dt = c.out[0].dtype;
  // u8 / i8: the forward max pooling of quantized values (values only matter; same kernel)
  const bool q8_max = c.op == INGOT_OP_MAX_POOL2D && has_dtype(INGOT_DTYPES_Q8, dt);
  if (!has_dtype(INGOT_DTYPES_FLOAT, dt) && !q8_max) return false;
  for (int i = 0; i < c.n_in; ++i)
    if (!dense(c.in[i])) return false;
  for (int i = 0; i < c.n_out; ++i)
    if (!dense(c.out[i])) return false;
  switch (c.op) {
    case INGOT_OP_MAX_POOL2D:
      return c.n_in == 1 && c.n_out == 2 && c.in[0].dtype == dt && c.out[1].dtype == INGOT_I64 &&
             sdk::numel(c.out[1]) == sdk::numel(c.out[0]) && geometry(a, c.in[0], c.out[0], g);
    case INGOT_OP_AVG_POOL2D: return c.n_in == 1 && c.n_out == 1 && c.in[0].dtype == dt && geometry(a, c.in[0], c.out[0], g);
    case INGOT_OP_MAX_POOL2D_BWD:
      return c.n_in == 3 && c.n_out == 1 && c.in[0].dtype == dt && c.in[2].dtype == INGOT_I64 &&
             sdk::numel(c.in[2]) == sdk::numel(c.in[0]) && geometry(a, c.out[0], c.in[0], g);
    case INGOT_OP_AVG_POOL2D_BWD: return c.n_in == 1 && c.n_out == 1 && c.in[0].dtype == dt && geometry(a, c.out[0], c.in[0], g);
    default: return false;
  }
}

void pool_run(const sdk::OpCall& c, const Launch& l) {
  const auto& a = sdk::attr<ingot_attr_pool2d>(c.attrs);
  const bool bwd = c.op == INGOT_OP_MAX_POOL2D_BWD || c.op == INGOT_OP_AVG_POOL2D_BWD;
  Geo g{};
  geometry(a, bwd ? c.out[0] : c.in[0], bwd ? c.in[0] : c.out[0], g);
  const int64_t n = sdk::numel(c.out[0]);
  if (n == 0) return;
  if (has_dtype(INGOT_DTYPES_Q8, c.out[0].dtype)) {  // MAX_POOL2D of quantized values
    int64_t* idx = sdk::data_ptr<int64_t>(c.out[1]);
    if (c.out[0].dtype == INGOT_U8)
      max_pool_kernel<<<grid_for(n, l), kThreads, 0, l.stream>>>(sdk::data_ptr<const uint8_t>(c.in[0]),
                                                                 sdk::data_ptr<uint8_t>(c.out[0]), idx, g, n);
    else
      max_pool_kernel<<<grid_for(n, l), kThreads, 0, l.stream>>>(sdk::data_ptr<const int8_t>(c.in[0]),
                                                                 sdk::data_ptr<int8_t>(c.out[0]), idx, g, n);
    check_launch("pool");
    return;
  }
  visit_float(c.out[0].dtype, "pool", [&](auto tag) {
    using T = decltype(tag);
    const unsigned grid = grid_for(n, l);
    const T* in = sdk::data_ptr<const T>(c.in[0]);
    T* out = sdk::data_ptr<T>(c.out[0]);
    switch (c.op) {
      case INGOT_OP_MAX_POOL2D:
        max_pool_kernel<T><<<grid, kThreads, 0, l.stream>>>(in, out, sdk::data_ptr<int64_t>(c.out[1]), g, n);
        break;
      case INGOT_OP_AVG_POOL2D: avg_pool_kernel<T><<<grid, kThreads, 0, l.stream>>>(in, out, g, n); break;
      case INGOT_OP_MAX_POOL2D_BWD:
        pool_bwd_kernel<T><<<grid, kThreads, 0, l.stream>>>(in, sdk::data_ptr<const int64_t>(c.in[2]), out, g, n, 1);
        break;
      default: pool_bwd_kernel<T><<<grid, kThreads, 0, l.stream>>>(in, nullptr, out, g, n, 0); break;
    }
  });
  check_launch("pool");
}

}  // namespace ingot::cuda
