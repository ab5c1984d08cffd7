// Private: torchvision.transforms.functional on uint8 tensor images [C, H, W], C 1 or 3, in
// place, with torchvision's float32 arithmetic and its truncation or rounding back to uint8
// (the colour adjustments, sharpness, posterize, solarize, autocontrast, equalize, flips and
// nearest-neighbour affine warps).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace ingot::data {

/// Planar uint8 pixels: `channels` planes of height x width.
struct Planes {
  int64_t channels = 0, height = 0, width = 0;
  std::vector<uint8_t> px;

  int64_t area() const { return height * width; }
  uint8_t* plane(int64_t c) { return px.data() + c * area(); }
  const uint8_t* plane(int64_t c) const { return px.data() + c * area(); }
};

void hflip(Planes& img);
void adjust_brightness(Planes& img, double factor);
void adjust_contrast(Planes& img, double factor);
void adjust_saturation(Planes& img, double factor);
/// `factor` in [-0.5, 0.5]: through float HSV as torchvision, truncated back to uint8.
void adjust_hue(Planes& img, double factor);
void adjust_sharpness(Planes& img, double factor);
void posterize(Planes& img, int64_t bits);
void solarize(Planes& img, double threshold);
void autocontrast(Planes& img);
void equalize(Planes& img);
/// F.affine / F.rotate on a tensor with nearest interpolation and fill 0 (no expansion):
/// `inverse` is _get_inverse_affine_matrix's output matrix to input, about the image centre.
void affine_nearest(Planes& img, const std::array<double, 6>& inverse);
/// torchvision's _get_inverse_affine_matrix (angles in degrees; centre relative to the image's).
std::array<double, 6> inverse_affine_matrix(std::array<double, 2> center, double angle, std::array<double, 2> translate,
                                            double scale, std::array<double, 2> shear);

}  // namespace ingot::data
