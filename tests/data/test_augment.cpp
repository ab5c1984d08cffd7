// Augmentations: exact crop/flip geometry with the dataset's pad value, and draws keyed by
// (seed, epoch, sample): reproducible, different across epochs and samples.
#include <catch2/catch.hpp>

#include <set>

#include "ingot/data/augment.h"

using namespace ingot;
using namespace ingot::data;

namespace {

/// A 2-channel 3x4 dataset whose pixel (c, y, x) is 100c + 10y + x; pads with -1 / -2.
class GridDataset final : public Dataset {
 public:
  int64_t size() const override { return 1; }
  Shape sample_shape() const override { return Shape{2, 3, 4}; }
  int64_t num_classes() const override { return 1; }
  int64_t read(int64_t, float* image) const override {
    for (int c = 0; c < 2; ++c)
      for (int y = 0; y < 3; ++y)
        for (int x = 0; x < 4; ++x) image[c * 12 + y * 4 + x] = static_cast<float>(100 * c + 10 * y + x);
    return 0;
  }
  float pad_value(int64_t channel) const override { return -1.0f - static_cast<float>(channel); }
};

std::vector<float> augmented(const Augment& aug, const AugmentDraw& draw) {
  GridDataset ds;
  std::vector<float> src(24), dst(24);
  ds.read(0, src.data());
  apply_augment(aug, draw, ds, src.data(), dst.data());
  return dst;
}

}  // namespace

TEST_CASE("augment: centred crop without flip is the identity, flip mirrors", "[data][augment]") {
  GridDataset ds;
  std::vector<float> src(24);
  ds.read(0, src.data());
  const Augment aug{2, true};
  CHECK(augmented(aug, AugmentDraw{2, 2, false}) == src);
  const auto flipped = augmented(aug, AugmentDraw{2, 2, true});
  for (int c = 0; c < 2; ++c)
    for (int y = 0; y < 3; ++y)
      for (int x = 0; x < 4; ++x) CHECK(flipped[c * 12 + y * 4 + x] == src[c * 12 + y * 4 + (3 - x)]);
}

TEST_CASE("augment: crop offsets shift the image and pad with the channel's black", "[data][augment]") {
  const Augment aug{1, false};
  // top = 0, left = 2: out(y, x) = in(y - 1, x + 1), like torchvision's pad-then-crop.
  const auto out = augmented(aug, AugmentDraw{0, 2, false});
  const std::vector<float> expected = {-1, -1, -1, -1, 1,   2,   3,   -1, 11,  12,  13,  -1,
                                       -2, -2, -2, -2, 101, 102, 103, -2, 111, 112, 113, -2};
  CHECK(out == expected);
  // Flip after crop: out(y, x) = cropped(y, W-1-x).
  const auto both = augmented(aug, AugmentDraw{0, 2, true});
  CHECK(both[4] == -1.0f);
  CHECK(both[5] == 3.0f);
  CHECK(both[7] == 1.0f);
}

TEST_CASE("augment: draws are reproducible, in range and vary by epoch and sample", "[data][augment]") {
  const Augment aug{4, true};
  std::set<std::tuple<int64_t, int64_t, bool>> distinct;
  int flips = 0, epoch_changes = 0;
  for (int64_t i = 0; i < 4000; ++i) {
    const AugmentDraw d = draw_augment(aug, 9, 3, i);
    const AugmentDraw again = draw_augment(aug, 9, 3, i);
    CHECK((d.top == again.top && d.left == again.left && d.flip == again.flip));
    REQUIRE((d.top >= 0 && d.top <= 8 && d.left >= 0 && d.left <= 8));
    distinct.insert({d.top, d.left, d.flip});
    flips += d.flip ? 1 : 0;
    const AugmentDraw next_epoch = draw_augment(aug, 9, 4, i);
    epoch_changes += (d.top != next_epoch.top || d.left != next_epoch.left || d.flip != next_epoch.flip) ? 1 : 0;
  }
  CHECK(distinct.size() == 9u * 9u * 2u);  // every combination appears among 4000 samples
  CHECK((flips > 1850 && flips < 2150));
  CHECK(epoch_changes > 3900);  // same only by chance (1 in 162)
  const AugmentDraw off = draw_augment(Augment{}, 9, 3, 0);
  CHECK((off.top == 0 && off.left == 0 && !off.flip));
}
