// Private: separable resampling of planar images, torch's bilinear interpolate with half-pixel
// centres (align_corners=False), antialiased or not, over any window of the input and any range of
// the output. Shared by image_transform.cpp and vision_transforms.cpp.
#pragma once

#include <cstdint>
#include <vector>

namespace ingot::data {

/// One axis of the interpolation: per output index, the first input index and the weights of the
/// inputs from it on (`taps` slots per output; `count` of them used).
struct ResampleAxis {
  std::vector<int64_t> first, count;
  std::vector<float> weights;
  int64_t taps = 0;

  int64_t size() const { return static_cast<int64_t>(first.size()); }
  const float* weights_of(int64_t d) const { return weights.data() + d * taps; }
  /// The inputs any output reads: [lo(), hi()).
  int64_t lo() const;
  int64_t hi() const;
};

/// Outputs `first .. first + count` of the window [start, start + length) of an `in`-long axis
/// resized to `out`; the window may be fractional (an image decoded at a reduced scale), inputs
/// outside it are not read. Plain: torch's bilinear (the two inputs nearest the output's centre).
/// Antialiased: torch's antialias=True (PIL's): a triangle filter stretched over `length / out`
/// inputs when shrinking, weights normalised to sum to one.
ResampleAxis resample_axis(int64_t in, double start, double length, int64_t out, int64_t first, int64_t count,
                           bool antialias);

/// `channels` planes of h x w values (T: uint8_t or float) resampled along the width, then the
/// height, to `channels` planes of ys.size() x xs.size() floats at `out`. Only the rows the
/// height axis reads go through the first pass; `rows` is scratch space, reused across calls.
template <class T>
void resample(const T* planes, int64_t channels, int64_t h, int64_t w, const ResampleAxis& ys, const ResampleAxis& xs,
              float* out, std::vector<float>& rows);

/// Python's round() of d / 2 (halves to even), as torchvision's CenterCrop computes its offsets.
inline int64_t half_rounded_even(int64_t d) {
  const int64_t k = d / 2;
  return d % 2 == 0 || k % 2 == 0 ? k : k + 1;
}

}  // namespace ingot::data
