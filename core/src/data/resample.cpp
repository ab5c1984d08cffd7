// Separable bilinear resampling (torch's upsample_bilinear2d arithmetic, with or without
// antialiasing) over windows of planar images.
#include "resample.h"

#include <algorithm>
#include <cmath>

namespace ingot::data {

int64_t ResampleAxis::lo() const {
  int64_t v = first.empty() ? 0 : first[0];
  for (const int64_t f : first) v = std::min(v, f);
  return v;
}

int64_t ResampleAxis::hi() const {
  int64_t v = 0;
  for (size_t d = 0; d < first.size(); ++d) v = std::max(v, first[d] + count[d]);
  return v;
}

ResampleAxis resample_axis(int64_t in, double start, double length, int64_t out, int64_t first, int64_t count,
                           bool antialias) {
  // The window's whole pixels; with a whole-pixel window, positions are computed relative to its
  // start exactly as torch computes them on the cropped image.
  const int64_t begin = std::max<int64_t>(static_cast<int64_t>(std::floor(start)), 0);
  const int64_t end = std::min<int64_t>(static_cast<int64_t>(std::ceil(start + length)), in);
  const float scale = static_cast<float>(length) / static_cast<float>(out);
  const int64_t whole = static_cast<int64_t>(std::floor(start));
  const double frac = start - static_cast<double>(whole);
  // torch's _compute_weights_aa in float32 (support = interp_size / 2 * scale when shrinking).
  const float support = scale >= 1.0f ? scale : 1.0f, invscale = scale >= 1.0f ? static_cast<float>(1.0 / scale) : 1.0f;
  ResampleAxis a;
  a.taps = antialias ? static_cast<int64_t>(std::ceil(support)) * 2 + 1 : 2;
  a.first.resize(static_cast<size_t>(count));
  a.count.resize(static_cast<size_t>(count));
  a.weights.assign(static_cast<size_t>(count * a.taps), 0.0f);
  for (int64_t i = 0; i < count; ++i) {
    const int64_t d = first + i;
    float* w = a.weights.data() + i * a.taps;
    if (!antialias) {
      const float src = std::max(scale * (static_cast<float>(d) + 0.5f) - 0.5f, 0.0f);
      const int64_t j = std::min(static_cast<int64_t>(std::floor(start + src)), end - 1);
      const float lambda = static_cast<float>(start + src - static_cast<double>(j));
      a.first[i] = j;
      a.count[i] = j < end - 1 ? 2 : 1;
      w[0] = j < end - 1 ? 1.0f - lambda : 1.0f;
      if (j < end - 1) w[1] = lambda;
      continue;
    }
    // Positions relative to the window's start, as torch computes them on the cropped image.
    const auto center = static_cast<float>(scale * (static_cast<double>(d) + 0.5));
    const int64_t lo =
        std::max(whole + static_cast<int64_t>(std::floor(static_cast<double>(center - support) + 0.5 + frac)), begin);
    const int64_t hi =
        std::min(whole + static_cast<int64_t>(std::floor(static_cast<double>(center + support) + 0.5 + frac)), end);
    float total = 0.0f;
    for (int64_t j = lo; j < hi; ++j) {
      const float x = frac == 0.0
                          ? static_cast<float>((static_cast<float>(j - whole) - center + 0.5) * invscale)
                          : static_cast<float>((static_cast<double>(j - whole) - frac - center + 0.5) * invscale);
      const float t = std::abs(x);
      w[j - lo] = t < 1.0f ? static_cast<float>(1.0 - t) : 0.0f;
      total += w[j - lo];
    }
    if (total != 0.0f)
      for (int64_t k = 0; k < hi - lo; ++k) w[k] /= total;
    a.first[i] = lo;
    a.count[i] = std::max<int64_t>(hi - lo, 0);
  }
  return a;
}

template <class T>
void resample(const T* planes, int64_t channels, int64_t h, int64_t w, const ResampleAxis& ys, const ResampleAxis& xs,
              float* out, std::vector<float>& rows) {
  const int64_t out_h = ys.size(), out_w = xs.size(), y0 = ys.lo(), y1 = ys.hi();
  rows.resize(static_cast<size_t>(std::max<int64_t>(y1 - y0, 0) * out_w));
  for (int64_t c = 0; c < channels; ++c) {
    const T* src = planes + c * h * w;
    for (int64_t y = y0; y < y1; ++y) {
      float* row = rows.data() + (y - y0) * out_w;
      for (int64_t x = 0; x < out_w; ++x) {
        const T* in = src + y * w + xs.first[x];
        const float* wt = xs.weights_of(x);
        float v = 0.0f;
        for (int64_t k = 0; k < xs.count[x]; ++k) v += wt[k] * static_cast<float>(in[k]);
        row[x] = v;
      }
    }
    float* dst = out + c * out_h * out_w;
    for (int64_t y = 0; y < out_h; ++y) {
      float* o = dst + y * out_w;
      std::fill(o, o + out_w, 0.0f);
      const float* wt = ys.weights_of(y);
      for (int64_t k = 0; k < ys.count[y]; ++k) {
        const float* r = rows.data() + (ys.first[y] + k - y0) * out_w;
        const float wk = wt[k];
        for (int64_t x = 0; x < out_w; ++x) o[x] += wk * r[x];
      }
    }
  }
}

template void resample<uint8_t>(const uint8_t*, int64_t, int64_t, int64_t, const ResampleAxis&, const ResampleAxis&,
                                float*, std::vector<float>&);
template void resample<float>(const float*, int64_t, int64_t, int64_t, const ResampleAxis&, const ResampleAxis&, float*,
                              std::vector<float>&);

}  // namespace ingot::data
