// A hand-written oracle for the quantized ops (op table rows QUANTIZE, DEQUANTIZE, QLINEAR,
// QCONV2D) on host vectors: plain loops written from the op table's text, independent of every
// backend, for the cpu_onednn int8 tests.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace ingot::test::int8 {

/// Scale and zero point: 1 value (per tensor) or one per channel.
struct QP {
  std::vector<float> scale;
  std::vector<int32_t> zp;
  float s(int64_t c) const { return scale[scale.size() == 1 ? 0 : static_cast<size_t>(c)]; }
  int32_t z(int64_t c) const { return zp[zp.size() == 1 ? 0 : static_cast<size_t>(c)]; }
};

/// clamp(nearbyint(x * (1.0f / scale)) + zp, lo, hi), in f32 with ties to even.
inline int32_t quantize_one(float x, float scale, int32_t zp, int32_t lo, int32_t hi) {
  const float q = std::nearbyint(x * (1.0f / scale));
  return static_cast<int32_t>(std::clamp<int64_t>(static_cast<int64_t>(q) + zp, lo, hi));
}

/// Output epilogue of QLINEAR / QCONV2D: kind 0 f32, 1 i32, 2 requantized (range lo..hi).
struct Epi {
  int kind = 0;
  bool relu = false;
  std::vector<float> bias;  ///< empty: none
  float y_scale = 1.f;
  int32_t y_zp = 0, lo = 0, hi = 255;
};

/// The epilogue of one accumulator of output channel c, as a double holding the exact result.
inline double finish(int32_t acc, int64_t c, float x_scale, const QP& w, const Epi& e) {
  if (e.kind == 1) return acc;
  float v = static_cast<float>(acc) * (x_scale * w.s(c));
  if (!e.bias.empty()) v += e.bias[static_cast<size_t>(c)];
  if (e.relu) v = std::max(v, 0.f);
  if (e.kind == 0) return v;
  return quantize_one(v, e.y_scale, e.y_zp, e.lo, e.hi);
}

/// x [m, k] (quantized values), w [n, k] -> [m, n].
inline std::vector<double> qlinear(const std::vector<int32_t>& x, float x_scale, int32_t x_zp,
                                   const std::vector<int32_t>& w, const QP& wq, int64_t m, int64_t k, int64_t n,
                                   const Epi& e) {
  std::vector<double> y(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      int64_t acc = 0;
      for (int64_t t = 0; t < k; ++t)
        acc += static_cast<int64_t>(x[static_cast<size_t>(i * k + t)] - x_zp) *
               (w[static_cast<size_t>(j * k + t)] - wq.z(j));
      y[static_cast<size_t>(i * n + j)] = finish(static_cast<int32_t>(acc), j, x_scale, wq, e);
    }
  }
  return y;
}

struct ConvShape {
  int64_t n, c, h, w, o, kh, kw, stride = 1, pad = 0, dilation = 1, groups = 1;
  int64_t oh() const { return (h + 2 * pad - dilation * (kh - 1) - 1) / stride + 1; }
  int64_t ow() const { return (w + 2 * pad - dilation * (kw - 1) - 1) / stride + 1; }
};

/// x NCHW, w OIHW [o, c / groups, kh, kw] -> NCHW; padding holds the real value 0 (x_zp).
inline std::vector<double> qconv(const std::vector<int32_t>& x, float x_scale, int32_t x_zp,
                                 const std::vector<int32_t>& w, const QP& wq, const ConvShape& s, const Epi& e) {
  const int64_t oh = s.oh(), ow = s.ow(), cg = s.c / s.groups, og = s.o / s.groups;
  std::vector<double> y(static_cast<size_t>(s.n * s.o * oh * ow));
  for (int64_t b = 0; b < s.n; ++b)
    for (int64_t o = 0; o < s.o; ++o)
      for (int64_t oy = 0; oy < oh; ++oy)
        for (int64_t ox = 0; ox < ow; ++ox) {
          int64_t acc = 0;
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t i = 0; i < s.kh; ++i)
              for (int64_t j = 0; j < s.kw; ++j) {
                const int64_t iy = oy * s.stride - s.pad + i * s.dilation, ix = ox * s.stride - s.pad + j * s.dilation;
                if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w) continue;
                const int64_t c = (o / og) * cg + ci;
                const int32_t xv = x[static_cast<size_t>(((b * s.c + c) * s.h + iy) * s.w + ix)];
                const int32_t wv = w[static_cast<size_t>(((o * cg + ci) * s.kh + i) * s.kw + j)];
                acc += static_cast<int64_t>(xv - x_zp) * (wv - wq.z(o));
              }
          y[static_cast<size_t>(((b * s.o + o) * oh + oy) * ow + ox)] =
              finish(static_cast<int32_t>(acc), o, x_scale, wq, e);
        }
  return y;
}

}  // namespace ingot::test::int8
