// Channel conversion and bilinear resizing of decoded images (torch's upsample_bilinear2d
// arithmetic with align_corners=False, with or without antialiasing), plus torchvision's Resize +
// CenterCrop geometry.
#include "ingot/data/image_transform.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "ingot/base/error.h"

namespace ingot::data {
namespace {

/// One axis of the interpolation: per output index, the first input index and the weights of the
/// input indices from it on.
struct Axis {
  std::vector<int64_t> first;
  std::vector<std::vector<float>> weights;
};

/// Output positions `first .. first + count` of an axis resized from `in` to `out`. Plain:
/// torch's bilinear (the two inputs nearest the output's centre). Antialiased: torch's
/// antialias=True (PIL's): a triangle filter stretched over `in / out` inputs when shrinking,
/// weights normalised to sum to one.
Axis axis(int64_t in, int64_t out, int64_t first, int64_t count, bool antialias) {
  Axis a;
  const float scale = static_cast<float>(in) / static_cast<float>(out);
  for (int64_t d = first; d < first + count; ++d) {
    if (!antialias) {
      const float src = std::max(scale * (static_cast<float>(d) + 0.5f) - 0.5f, 0.0f);
      const int64_t i = std::min(static_cast<int64_t>(src), in - 1);
      const float lambda = src - static_cast<float>(i);
      a.first.push_back(i);
      a.weights.push_back(i < in - 1 ? std::vector<float>{1.0f - lambda, lambda} : std::vector<float>{1.0f});
      continue;
    }
    const double support = scale >= 1.0f ? scale : 1.0, invscale = scale >= 1.0f ? 1.0 / scale : 1.0;
    const double center = scale * (static_cast<double>(d) + 0.5);
    const int64_t lo = std::max<int64_t>(static_cast<int64_t>(center - support + 0.5), 0);
    const int64_t hi = std::min<int64_t>(static_cast<int64_t>(center + support + 0.5), in);
    std::vector<float> w;
    double total = 0.0;
    for (int64_t j = lo; j < hi; ++j) {
      const double t = std::abs((static_cast<double>(j) - center + 0.5) * invscale);
      w.push_back(static_cast<float>(t < 1.0 ? 1.0 - t : 0.0));
      total += w.back();
    }
    for (float& v : w) v = total > 0.0 ? static_cast<float>(v / total) : 0.0f;
    a.first.push_back(lo);
    a.weights.push_back(std::move(w));
  }
  return a;
}

/// Rows `top ..` and columns `left ..` (out_h x out_w of them) of the image resized to rh x rw:
/// along the width first, then the height.
std::vector<float> resize_window(const std::vector<float>& planes, int64_t channels, int64_t h, int64_t w, int64_t rh,
                                 int64_t rw, int64_t top, int64_t left, int64_t out_h, int64_t out_w,
                                 bool antialias) {
  const Axis ys = axis(h, rh, top, out_h, antialias), xs = axis(w, rw, left, out_w, antialias);
  std::vector<float> rows(static_cast<size_t>(h * out_w));
  std::vector<float> out(static_cast<size_t>(channels * out_h * out_w));
  for (int64_t c = 0; c < channels; ++c) {
    const float* src = planes.data() + c * h * w;
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < out_w; ++x) {
        const float* in = src + y * w + xs.first[x];
        float v = 0.0f;
        for (size_t k = 0; k < xs.weights[x].size(); ++k) v += xs.weights[x][k] * in[k];
        rows[static_cast<size_t>(y * out_w + x)] = v;
      }
    float* dst = out.data() + c * out_h * out_w;
    for (int64_t y = 0; y < out_h; ++y)
      for (int64_t x = 0; x < out_w; ++x) {
        float v = 0.0f;
        for (size_t k = 0; k < ys.weights[y].size(); ++k)
          v += ys.weights[y][k] * rows[static_cast<size_t>((ys.first[y] + static_cast<int64_t>(k)) * out_w + x)];
        dst[y * out_w + x] = v;
      }
  }
  return out;
}

/// Python's round() of d / 2 (halves to even), as torchvision's CenterCrop computes its offset.
int64_t half_rounded_even(int64_t d) {
  const int64_t k = d / 2;
  return d % 2 == 0 || k % 2 == 0 ? k : k + 1;
}

}  // namespace

ResizeMode parse_resize_mode(const std::string& text, const std::string& where) {
  if (text == "crop") return ResizeMode::Crop;
  if (text == "stretch") return ResizeMode::Stretch;
  throw ConfigError(
      fmt::format("{}: resize '{}' is not known; use crop (keep the aspect ratio, cut the centre) or "
                  "stretch",
                  where, text));
}

std::vector<uint8_t> image_planes(const Image& image, int64_t channels) {
  INGOT_CHECK_AS(channels == 1 || channels == 3, ConfigError,
                 "images give 1 (grey) or 3 (RGB) channels, but model.input_shape asks for {}; set its first value "
                 "to 1 or 3",
                 channels);
  const int64_t plane = image.width * image.height, in = image.channels;
  const bool colour = in >= 3;
  std::vector<uint8_t> out(static_cast<size_t>(channels * plane));
  for (int64_t p = 0; p < plane; ++p) {
    const uint8_t* px = image.pixels.data() + p * in;
    if (channels == 3) {
      for (int64_t c = 0; c < 3; ++c) out[static_cast<size_t>(c * plane + p)] = colour ? px[c] : px[0];
    } else {
      out[static_cast<size_t>(p)] =
          colour ? static_cast<uint8_t>((px[0] * 299 + px[1] * 587 + px[2] * 114) / 1000) : px[0];
    }
  }
  return out;
}

std::vector<float> resize_bilinear(const std::vector<float>& planes, int64_t channels, int64_t height, int64_t width,
                                   int64_t out_height, int64_t out_width, bool antialias) {
  INGOT_CHECK(static_cast<int64_t>(planes.size()) == channels * height * width && out_height > 0 && out_width > 0,
              "resize_bilinear: {} values for [{}, {}, {}] to {}x{}", planes.size(), channels, height, width,
              out_height, out_width);
  return resize_window(planes, channels, height, width, out_height, out_width, 0, 0, out_height, out_width, antialias);
}

CropBox crop_box(int64_t height, int64_t width, int64_t out_height, int64_t out_width) {
  CropBox b{};
  if (out_height * width >= out_width * height) {  // the height limits the scale
    b.resized_height = out_height;
    b.resized_width = std::max(out_width, width * out_height / height);
  } else {
    b.resized_width = out_width;
    b.resized_height = std::max(out_height, height * out_width / width);
  }
  b.top = half_rounded_even(b.resized_height - out_height);
  b.left = half_rounded_even(b.resized_width - out_width);
  return b;
}

std::vector<uint8_t> image_sample(const Image& image, const Shape& sample, ResizeMode mode, bool antialias) {
  INGOT_CHECK_AS(sample.size() == 3 && sample[1] > 0 && sample[2] > 0, ConfigError,
                 "images need model.input_shape [C, H, W] with C 1 or 3, got {}", sample.str());
  const int64_t c = sample[0], h = sample[1], w = sample[2];
  std::vector<uint8_t> planes = image_planes(image, c);
  if (image.height == h && image.width == w) return planes;
  const std::vector<float> in(planes.begin(), planes.end());
  CropBox box{h, w, 0, 0};
  if (mode == ResizeMode::Crop) box = crop_box(image.height, image.width, h, w);
  const std::vector<float> out =
      resize_window(in, c, image.height, image.width, box.resized_height, box.resized_width, box.top, box.left, h, w,
                    antialias);
  std::vector<uint8_t> bytes(out.size());
  std::transform(out.begin(), out.end(), bytes.begin(),
                 [](float v) { return static_cast<uint8_t>(std::clamp(std::nearbyint(v), 0.0f, 255.0f)); });
  return bytes;
}

}  // namespace ingot::data
