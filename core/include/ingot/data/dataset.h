// Dataset: the interface the DataLoader reads samples through, and the in-memory image
// classification dataset (images normalised once at load into one f32 buffer, labels int64).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ingot/tensor/tensor.h"

namespace ingot::data {

/// A map-style dataset of image classification samples. Implementations are read-only after
/// construction: `read` is called from several loader workers at once.
class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual int64_t size() const = 0;
  /// Shape of one sample's input, [C, H, W].
  virtual Shape sample_shape() const = 0;
  virtual int64_t num_classes() const = 0;
  /// Copies sample `index`'s input (C*H*W floats, already normalised) to `image` and returns its
  /// label. Byte work only; thread-safe.
  virtual int64_t read(int64_t index, float* image) const = 0;
  /// The value of a black (zero) pixel of `channel` after normalisation: what padding adds.
  virtual float pad_value(int64_t channel) const = 0;

  int64_t sample_numel() const { return sample_shape().numel(); }
};

/// Per-pixel normalisation applied once at load: (x / 255 - mean) / std, in float like
/// torchvision's ToTensor + Normalize. A single value or one per channel.
struct Normalize {
  std::vector<float> mean{0.0f};
  std::vector<float> std{1.0f};
};

/// Applies `normalize` in place to `values`, N samples of `sample` = [C, H, W] floats: (x - mean) /
/// std per channel (empty mean or std: 0 or 1). ConfigError naming `source` when mean or std has
/// neither one value nor one per channel.
void normalize_samples(std::vector<float>& values, const Shape& sample, const Normalize& normalize,
                       const std::string& source);

/// Samples held in memory: `images` f32 [N, C, H, W] (normalised), `labels` i64 [N].
class InMemoryDataset final : public Dataset {
 public:
  /// Takes the tensors as they are; `pad_values` has one entry per channel (or one for all).
  InMemoryDataset(Tensor images, Tensor labels, int64_t num_classes, std::vector<float> pad_values = {0.0f});
  /// Normalises unsigned-byte images [N, H, W] (C = 1) or [N, C, H, W] once; checks that labels
  /// [N] lie in [0, num_classes). `source` names the data in error messages (file paths).
  static InMemoryDataset from_bytes(const std::vector<uint8_t>& images, const std::vector<int64_t>& image_dims,
                                    const std::vector<uint8_t>& labels, const std::vector<int64_t>& label_dims,
                                    int64_t num_classes, const Normalize& normalize, const std::string& source);

  int64_t size() const override { return images_.size(0); }
  Shape sample_shape() const override;
  int64_t num_classes() const override { return num_classes_; }
  int64_t read(int64_t index, float* image) const override;
  float pad_value(int64_t channel) const override;

  /// The whole normalised set, e.g. to evaluate in one pass.
  const Tensor& images() const { return images_; }
  const Tensor& labels() const { return labels_; }

 private:
  Tensor images_;
  Tensor labels_;
  int64_t num_classes_;
  std::vector<float> pad_values_;
};

}  // namespace ingot::data
