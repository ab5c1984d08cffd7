// From a decoded image to a model's sample: channel conversion (grey, RGB) and bilinear resizing
// to [C, H, W], by stretching or by torchvision's Resize(shorter side) + CenterCrop.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ingot/data/image_decode.h"
#include "ingot/tensor/shape.h"

namespace ingot::data {

/// How an image reaches the model's height and width.
enum class ResizeMode {
  Crop,     ///< scale so the image covers H x W (aspect kept), then cut the centre
  Stretch,  ///< scale each axis to H and W
};

/// "crop" or "stretch"; ConfigError naming `where` otherwise.
ResizeMode parse_resize_mode(const std::string& text, const std::string& where);

/// The image as planar bytes [channels, height, width]. Alpha is dropped (not composited).
/// channels 3: RGB, grey replicated; channels 1: luminance as PIL's convert("L"),
/// L = (R * 299 + G * 587 + B * 114) / 1000 in integers. ConfigError for other channel counts.
std::vector<uint8_t> image_planes(const Image& image, int64_t channels);

/// Bilinear resize of planar floats [channels, height, width] to [channels, out_height,
/// out_width] with half-pixel centres, as torch.nn.functional.interpolate(mode="bilinear",
/// align_corners=False, antialias=...). Without antialiasing each output pixel blends the 2 x 2
/// input pixels nearest its centre (shrinking by much skips pixels and aliases); with it, the
/// filter widens to cover every input pixel under the output one (torchvision's Resize default,
/// and PIL's).
std::vector<float> resize_bilinear(const std::vector<float>& planes, int64_t channels, int64_t height, int64_t width,
                                   int64_t out_height, int64_t out_width, bool antialias = false);

/// Where ResizeMode::Crop takes an `out_height` x `out_width` sample from a `height` x `width`
/// image: the size it is first resized to (the side that limits the scale becomes exactly the
/// target, the other one int(side * scale), as torchvision's Resize(int) for a square target),
/// and the top left corner of the centred crop (torchvision's CenterCrop rounding).
struct CropBox {
  int64_t resized_height, resized_width, top, left;
};
CropBox crop_box(int64_t height, int64_t width, int64_t out_height, int64_t out_width);

/// The image as one sample of `sample` = [C, H, W] bytes: channels converted, then resized
/// (bilinear as resize_bilinear, antialiased or not, rounded to the nearest byte). ConfigError for
/// a sample shape that is not [1 or 3, H, W].
std::vector<uint8_t> image_sample(const Image& image, const Shape& sample, ResizeMode mode, bool antialias = true);

}  // namespace ingot::data
