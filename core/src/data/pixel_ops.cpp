// torchvision's functional ops on uint8 tensor images, reproduced with the same float32 steps:
// _blend computes ratio * a + (1 - ratio) * b in float32 and truncates; grid_sample and the
// sharpness blur round; the HSV round trip truncates.
#include "pixel_ops.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace ingot::data {
namespace {

uint8_t truncated(float v) { return static_cast<uint8_t>(std::clamp(v, 0.0f, 255.0f)); }

/// _blend(img, other, ratio) with `other(c, i)` the second image's value (a float).
template <class Other>
void blend(Planes& img, double ratio, Other other) {
  const float a = static_cast<float>(ratio), b = static_cast<float>(1.0 - ratio);
  for (int64_t c = 0; c < img.channels; ++c) {
    uint8_t* p = img.plane(c);
    for (int64_t i = 0; i < img.area(); ++i) p[i] = truncated(a * static_cast<float>(p[i]) + b * other(c, i));
  }
}

/// rgb_to_grayscale's (0.2989 r + 0.587 g + 0.114 b) truncated to uint8, or the only plane.
std::vector<uint8_t> grayscale(const Planes& img) {
  if (img.channels == 1) return img.px;
  // (Python's doubles, as float32 scalars)
  const auto kR = static_cast<float>(0.2989), kG = static_cast<float>(0.587), kB = static_cast<float>(0.114);
  std::vector<uint8_t> out(static_cast<size_t>(img.area()));
  const uint8_t *r = img.plane(0), *g = img.plane(1), *b = img.plane(2);
  for (int64_t i = 0; i < img.area(); ++i)
    out[i] = static_cast<uint8_t>(kR * static_cast<float>(r[i]) + kG * static_cast<float>(g[i]) +
                                  kB * static_cast<float>(b[i]));
  return out;
}

/// torch.remainder for floats: the sign of the divisor.
float remainder(float a, float b) {
  float m = std::fmod(a, b);
  if (m != 0.0f && ((b < 0.0f) != (m < 0.0f))) m += b;
  return m;
}

}  // namespace

void hflip(Planes& img) {
  for (int64_t c = 0; c < img.channels; ++c)
    for (int64_t y = 0; y < img.height; ++y)
      std::reverse(img.plane(c) + y * img.width, img.plane(c) + (y + 1) * img.width);
}

void adjust_brightness(Planes& img, double factor) {
  blend(img, factor, [](int64_t, int64_t) { return 0.0f; });
}

void adjust_contrast(Planes& img, double factor) {
  const std::vector<uint8_t> grey = grayscale(img);
  int64_t sum = 0;  // exact; torch's float32 sum is exact below 2^24
  for (const uint8_t v : grey) sum += v;
  const float mean = static_cast<float>(sum) / static_cast<float>(grey.size());
  blend(img, factor, [mean](int64_t, int64_t) { return mean; });
}

void adjust_saturation(Planes& img, double factor) {
  if (img.channels == 1) return;
  const std::vector<uint8_t> grey = grayscale(img);
  blend(img, factor, [&grey](int64_t, int64_t i) { return static_cast<float>(grey[i]); });
}

void adjust_hue(Planes& img, double factor) {
  if (img.channels == 1) return;
  const float hue = static_cast<float>(factor);
  uint8_t *pr = img.plane(0), *pg = img.plane(1), *pb = img.plane(2);
  for (int64_t i = 0; i < img.area(); ++i) {
    const float r = static_cast<float>(pr[i]) / 255.0f, g = static_cast<float>(pg[i]) / 255.0f,
                b = static_cast<float>(pb[i]) / 255.0f;
    // _rgb2hsv
    const float maxc = std::max({r, g, b}), minc = std::min({r, g, b});
    const bool eqc = maxc == minc;
    const float cr = maxc - minc;
    const float s = cr / (eqc ? 1.0f : maxc);
    const float div = eqc ? 1.0f : cr;
    const float rc = (maxc - r) / div, gc = (maxc - g) / div, bc = (maxc - b) / div;
    const float hr = maxc == r ? bc - gc : 0.0f;
    const float hg = maxc == g && maxc != r ? 2.0f + rc - bc : 0.0f;
    const float hb = maxc != g && maxc != r ? 4.0f + gc - rc : 0.0f;
    float h = std::fmod((hr + hg + hb) / 6.0f + 1.0f, 1.0f);
    h = remainder(h + hue, 1.0f);
    // _hsv2rgb
    const float v = maxc, i6 = std::floor(h * 6.0f), f = h * 6.0f - i6;
    const float p = std::clamp(v * (1.0f - s), 0.0f, 1.0f);
    const float q = std::clamp(v * (1.0f - s * f), 0.0f, 1.0f);
    const float t = std::clamp(v * (1.0f - s * (1.0f - f)), 0.0f, 1.0f);
    float o[3];
    switch (((static_cast<int>(i6) % 6) + 6) % 6) {
      case 0:
        o[0] = v, o[1] = t, o[2] = p;
        break;
      case 1:
        o[0] = q, o[1] = v, o[2] = p;
        break;
      case 2:
        o[0] = p, o[1] = v, o[2] = t;
        break;
      case 3:
        o[0] = p, o[1] = q, o[2] = v;
        break;
      case 4:
        o[0] = t, o[1] = p, o[2] = v;
        break;
      default:
        o[0] = v, o[1] = p, o[2] = q;
        break;
    }
    pr[i] = static_cast<uint8_t>(o[0] * 255.0f);
    pg[i] = static_cast<uint8_t>(o[1] * 255.0f);
    pb[i] = static_cast<uint8_t>(o[2] * 255.0f);
  }
}

void adjust_sharpness(Planes& img, double factor) {
  const int64_t h = img.height, w = img.width;
  if (h <= 2 || w <= 2) return;
  // The blurred image: [[1, 1, 1], [1, 5, 1], [1, 1, 1]] / 13 on the interior, rounded (a sum of
  // 13ths is never within float error of a half), the border kept.
  std::vector<uint8_t> blurred = img.px;
  for (int64_t c = 0; c < img.channels; ++c) {
    const uint8_t* p = img.plane(c);
    uint8_t* q = blurred.data() + c * img.area();
    for (int64_t y = 1; y < h - 1; ++y)
      for (int64_t x = 1; x < w - 1; ++x) {
        const uint8_t *up = p + (y - 1) * w + x, *mid = p + y * w + x, *down = p + (y + 1) * w + x;
        const int n = up[-1] + up[0] + up[1] + mid[-1] + 5 * mid[0] + mid[1] + down[-1] + down[0] + down[1];
        q[y * w + x] = static_cast<uint8_t>((2 * n + 13) / 26);
      }
  }
  blend(img, factor,
        [&blurred, &img](int64_t c, int64_t i) { return static_cast<float>(blurred[c * img.area() + i]); });
}

void posterize(Planes& img, int64_t bits) {
  const auto mask = static_cast<uint8_t>(-(int64_t{1} << (8 - bits)));
  for (uint8_t& v : img.px) v &= mask;
}

void solarize(Planes& img, double threshold) {
  const auto t = static_cast<float>(threshold);
  for (uint8_t& v : img.px)
    if (static_cast<float>(v) >= t) v = static_cast<uint8_t>(255 - v);
}

void autocontrast(Planes& img) {
  for (int64_t c = 0; c < img.channels; ++c) {
    uint8_t* p = img.plane(c);
    const auto [lo_it, hi_it] = std::minmax_element(p, p + img.area());
    float lo = *lo_it;
    float scale = 255.0f / (static_cast<float>(*hi_it) - lo);
    if (!std::isfinite(scale)) lo = 0.0f, scale = 1.0f;
    for (int64_t i = 0; i < img.area(); ++i) p[i] = truncated((static_cast<float>(p[i]) - lo) * scale);
  }
}

void equalize(Planes& img) {
  for (int64_t c = 0; c < img.channels; ++c) {
    uint8_t* p = img.plane(c);
    int64_t hist[256] = {};
    for (int64_t i = 0; i < img.area(); ++i) ++hist[p[i]];
    // The step: the pixels of every present level but the highest, over 255.
    int64_t last = 255;
    while (last > 0 && hist[last] == 0) --last;
    int64_t below = 0;
    for (int64_t v = 0; v < last; ++v) below += hist[v];
    const int64_t step = below / 255;
    if (step == 0) continue;
    uint8_t lut[256];
    int64_t cumulative = 0;
    for (int64_t v = 0; v < 256; ++v) {
      lut[v] = static_cast<uint8_t>(std::min<int64_t>((cumulative + step / 2) / step, 255));
      cumulative += hist[v];
    }
    for (int64_t i = 0; i < img.area(); ++i) p[i] = lut[p[i]];
  }
}

void affine_nearest(Planes& img, const std::array<double, 6>& inverse) {
  const int64_t h = img.height, w = img.width;
  // _gen_affine_grid: theta (float32) over half sizes, applied to pixel centres relative to the
  // image's centre; grid_sample (align_corners=False) unnormalises with (g + 1) * size / 2 - 0.5.
  const float hw = 0.5f * static_cast<float>(w), hh = 0.5f * static_cast<float>(h);
  float t[6];
  for (int k = 0; k < 6; ++k) t[k] = static_cast<float>(inverse[k]) / (k < 3 ? hw : hh);
  std::vector<int64_t> source(static_cast<size_t>(h * w));
  for (int64_t y = 0; y < h; ++y) {
    const float gy0 = static_cast<float>(y) - hh + 0.5f;
    for (int64_t x = 0; x < w; ++x) {
      const float gx0 = static_cast<float>(x) - hw + 0.5f;
      const float gx = gx0 * t[0] + gy0 * t[1] + t[2], gy = gx0 * t[3] + gy0 * t[4] + t[5];
      const float ix = std::nearbyint((gx + 1.0f) * hw - 0.5f), iy = std::nearbyint((gy + 1.0f) * hh - 0.5f);
      const bool inside = ix > -1.0f && ix < static_cast<float>(w) && iy > -1.0f && iy < static_cast<float>(h);
      source[y * w + x] = inside ? static_cast<int64_t>(iy) * w + static_cast<int64_t>(ix) : -1;
    }
  }
  std::vector<uint8_t> out(img.px.size());
  for (int64_t c = 0; c < img.channels; ++c) {
    const uint8_t* p = img.plane(c);
    uint8_t* q = out.data() + c * img.area();
    for (int64_t i = 0; i < img.area(); ++i) q[i] = source[i] < 0 ? 0 : p[source[i]];
  }
  img.px = std::move(out);
}

std::array<double, 6> inverse_affine_matrix(std::array<double, 2> center, double angle, std::array<double, 2> translate,
                                            double scale, std::array<double, 2> shear) {
  const double to_radians = std::numbers::pi / 180.0;  // Python's math.radians
  const double rot = angle * to_radians, sx = shear[0] * to_radians, sy = shear[1] * to_radians;
  const double cx = center[0], cy = center[1], tx = translate[0], ty = translate[1];
  const double a = std::cos(rot - sy) / std::cos(sy);
  const double b = -std::cos(rot - sy) * std::tan(sx) / std::cos(sy) - std::sin(rot);
  const double c = std::sin(rot - sy) / std::cos(sy);
  const double d = -std::sin(rot - sy) * std::tan(sx) / std::cos(sy) + std::cos(rot);
  std::array<double, 6> m{d, -b, 0.0, -c, a, 0.0};
  for (double& v : m) v /= scale;
  m[2] += m[0] * (-cx - tx) + m[1] * (-cy - ty);
  m[5] += m[3] * (-cx - tx) + m[4] * (-cy - ty);
  m[2] += cx;
  m[5] += cy;
  return m;
}

}  // namespace ingot::data
