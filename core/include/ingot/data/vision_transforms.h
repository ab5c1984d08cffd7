// Image transforms declared in YAML (`data.transforms: {train: [...], test: [...]}`), as
// torchvision's transforms on uint8 images: RandomResizedCrop, Resize, CenterCrop,
// RandomHorizontalFlip, ColorJitter, TrivialAugmentWide and RandAugment. Every random choice for
// a sample is drawn from (seed, epoch, sample index), so a sample's pixels do not depend on the
// worker that makes it or on the worker count. The draws are made before the image is decoded
// (they need only its size), which lets the decoder skip resolution the pipeline would throw away.
#pragma once

#include <yaml-cpp/yaml.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "ingot/data/image_decode.h"
#include "ingot/tensor/shape.h"

namespace ingot::data {

/// The random words of one sample's transforms, consumed in order: Philox blocks of (seed,
/// epoch, sample) on the data stream of transforms.
class TransformRng {
 public:
  TransformRng(uint64_t seed, int64_t epoch, int64_t index);
  uint32_t word();
  /// Uniform in [lo, hi).
  double uniform(double lo = 0.0, double hi = 1.0);
  /// Uniform integer in [0, n).
  int64_t below(int64_t n);

 private:
  uint64_t seed_;
  int64_t epoch_, index_;
  uint32_t block_ = 0;
  uint32_t words_[4] = {};
  int used_ = 4;
};

/// One step of a pipeline with its parameters (YAML: a list entry `{name: {key: value, ...}}` or
/// a bare name). Sizes are [height, width]; `resize` with one size scales the shorter side.
struct TransformStep {
  enum class Kind { RandomResizedCrop, Resize, CenterCrop, HorizontalFlip, ColorJitter, TrivialAugment, RandAugment };
  Kind kind = Kind::Resize;
  int64_t height = 0, width = 0;  ///< resize with width 0: the shorter side becomes `height`
  std::array<double, 2> scale{0.08, 1.0};
  std::array<double, 2> ratio{3.0 / 4.0, 4.0 / 3.0};
  double p = 0.5;  ///< hflip's probability
  double brightness = 0.0, contrast = 0.0, saturation = 0.0, hue = 0.0;
  int64_t num_ops = 2, magnitude = 9, magnitude_bins = 31;  ///< rand_augment (num_magnitude_bins as torchvision's)
};

/// Every step's draws for one image of a known size, made before decoding.
struct TransformPlan {
  /// Per step, in step order, what it drew or derived from the image size, in the step's pixels:
  /// random_resized_crop {top, left, height, width} of its source window; resize {source height,
  /// width, resized height, width}; center_crop {source height, width, top, left} (negative where
  /// the crop is larger: zero padding); hflip {1 flip, 0 not}; color_jitter {the order of the
  /// adjustments as a permutation of 0 brightness, 1 contrast, 2 saturation, 3 hue, then the
  /// brightness, contrast, saturation and hue factors}; trivial_augment one and rand_augment
  /// num_ops groups {op (torchvision's order: Identity, ShearX, ShearY, TranslateX, TranslateY,
  /// Rotate, Brightness, Color, Contrast, Sharpness, Posterize, Solarize, AutoContrast,
  /// Equalize), magnitude bin, sign, signed magnitude}.
  std::vector<std::vector<double>> draws;
  /// The largest power-of-two reduction (1, 2, 4 or 8) the decoder may apply before the steps
  /// run: the first step resamples, and at 1/divisor its source window still has at least as many
  /// pixels as its output along each axis. 1 when the first step does not resample.
  int64_t max_decode_divisor = 1;
};

class TransformPipeline {
 public:
  TransformPipeline() = default;
  explicit TransformPipeline(std::vector<TransformStep> steps) : steps_(std::move(steps)) {}
  /// Parses a YAML list; ConfigError naming the file, line and key for an unknown step or key, a
  /// bad value, or a list whose output size is not fixed (no resize or crop to a size at the end).
  static TransformPipeline parse(const YAML::Node& list, const std::string& file, const std::string& where);

  const std::vector<TransformStep>& steps() const { return steps_; }
  bool empty() const { return steps_.empty(); }
  /// [channels, H, W] of the output: the size the last sizing step sets.
  Shape output_shape(int64_t channels) const;

  /// The draws for an image of height x width (pixels of the file, before any decode reduction).
  TransformPlan plan(int64_t height, int64_t width, TransformRng& rng) const;
  /// Runs the steps on `image`, decoded at 1/divisor of the planned size (its sides are the
  /// planned ones divided by divisor, rounded up, as libjpeg's scaling gives; 1 <= divisor <=
  /// plan.max_decode_divisor), converting it to `channels` (1: luminance as PIL's "L", 3: RGB,
  /// grey replicated; alpha dropped). Writes `channels` planes of output_shape's H x W floats in
  /// [0, 255] to `out`, rounded to whole levels wherever torchvision's uint8 pipeline rounds (a
  /// pipeline without sizing steps, as built in code, writes the image's own size).
  void apply(const TransformPlan& plan, const Image& image, int64_t divisor, int64_t channels, float* out) const;

 private:
  std::vector<TransformStep> steps_;
};

}  // namespace ingot::data
