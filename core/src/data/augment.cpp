// Random crop with padding and horizontal flip, in one pass over the output pixels.
#include "ingot/data/augment.h"

#include <algorithm>

#include "data_rng.h"

namespace ingot::data {

AugmentDraw draw_augment(const Augment& augment, uint64_t seed, int64_t epoch, int64_t index) {
  const auto block = data_random(seed, DataStream::Augment, static_cast<uint64_t>(index), static_cast<uint64_t>(epoch));
  AugmentDraw draw;
  if (augment.crop_padding > 0) {
    draw.top = random_below(block.v[0], 2 * augment.crop_padding + 1);
    draw.left = random_below(block.v[1], 2 * augment.crop_padding + 1);
  }
  draw.flip = augment.hflip && sdk::philox_bernoulli(block.v[2], 0.5);
  return draw;
}

void apply_augment(const Augment& augment, const AugmentDraw& draw, const Dataset& dataset, const float* src,
                   float* dst) {
  const Shape shape = dataset.sample_shape();
  const int64_t channels = shape[0], h = shape[1], w = shape[2];
  const int64_t dy = draw.top - augment.crop_padding;   // source row = y + dy
  const int64_t dx = draw.left - augment.crop_padding;  // source column = x' + dx
  for (int64_t c = 0; c < channels; ++c) {
    const float fill = dataset.pad_value(c);
    const float* plane = src + c * h * w;
    float* out = dst + c * h * w;
    for (int64_t y = 0; y < h; ++y) {
      float* row = out + y * w;
      const int64_t sy = y + dy;
      if (sy < 0 || sy >= h) {
        std::fill(row, row + w, fill);
        continue;
      }
      const float* in = plane + sy * w;
      for (int64_t x = 0; x < w; ++x) {
        const int64_t sx = (draw.flip ? w - 1 - x : x) + dx;
        row[x] = sx >= 0 && sx < w ? in[sx] : fill;
      }
    }
  }
}

}  // namespace ingot::data
