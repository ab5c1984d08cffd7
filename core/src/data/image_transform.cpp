// Channel conversion and bilinear resizing of decoded images (torch's upsample_bilinear2d
// arithmetic with align_corners=False, with or without antialiasing), plus torchvision's Resize +
// CenterCrop geometry.
#include "ingot/data/image_transform.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "ingot/base/error.h"
#include "resample.h"

namespace ingot::data {
namespace {

/// Rows `top ..` and columns `left ..` (out_h x out_w of them) of the image resized to rh x rw:
/// along the width first, then the height.
std::vector<float> resize_window(const std::vector<float>& planes, int64_t channels, int64_t h, int64_t w, int64_t rh,
                                 int64_t rw, int64_t top, int64_t left, int64_t out_h, int64_t out_w,
                                 bool antialias) {
  const ResampleAxis ys = resample_axis(h, 0.0, static_cast<double>(h), rh, top, out_h, antialias);
  const ResampleAxis xs = resample_axis(w, 0.0, static_cast<double>(w), rw, left, out_w, antialias);
  std::vector<float> out(static_cast<size_t>(channels * out_h * out_w)), rows;
  resample(planes.data(), channels, h, w, ys, xs, out.data(), rows);
  return out;
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
