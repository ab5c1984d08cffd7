// A dataset of image files decoded when a sample is read (in the loader's workers), never held in
// memory: memory stays bounded by the loader's prefetch depth, not by the number of images. Each
// read takes one image's bytes (its file, or its record in a pack's mapped shard: image_pack.h),
// decodes them, runs the split's transforms with the sample's own draws (seed, epoch, index) and
// normalises: (x / 255 - mean) / std, as torchvision's ToTensor + Normalize.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "ingot/data/dataset.h"
#include "ingot/data/image_decode.h"
#include "ingot/data/image_transform.h"
#include "ingot/data/vision_transforms.h"

namespace ingot::data {

/// What a read does with a file that cannot be decoded.
enum class BadImagePolicy {
  Error,  ///< the read throws InputError naming the file (the run stops with that line)
  Skip,   ///< the next good file of the dataset stands in; each bad file is named once in a warning and counted
};

/// "error" or "skip"; ConfigError naming `where` otherwise.
BadImagePolicy parse_bad_image_policy(const std::string& text, const std::string& where);

struct ImageStreamOptions {
  /// The sample's steps; empty: the whole image resized to `sample` as the in-memory image_folder
  /// does (`resize`, `antialias`), so that both give the same values.
  TransformPipeline transforms;
  Shape sample;  ///< [C, H, W]: C converts the pixels; H, W are used without transforms
  ResizeMode resize = ResizeMode::Crop;
  bool antialias = true;
  Normalize normalize;
  /// Let a JPEG be decoded at 1/2, 1/4 or 1/8 scale when the transforms shrink it at least that
  /// much anyway (libjpeg's DCT scaling): values differ slightly from a full decode.
  bool reduced_decode = true;
  /// A JPEG's EXIF orientation: ignored, or applied before the transforms draw from its size.
  ExifOrientation exif_orientation = ExifOrientation::Ignore;
  BadImagePolicy on_bad_image = BadImagePolicy::Error;
  std::string source;  ///< named in messages ("data.image_folder: images/train")
};

class ImagePack;

class ImageStreamDataset final : public Dataset {
 public:
  /// `files[i]` has class `labels[i]` in [0, classes).
  ImageStreamDataset(std::vector<std::string> files, std::vector<int64_t> labels, int64_t classes,
                     ImageStreamOptions options);
  /// The images of a pack (`ingot pack`) in its order, with its labels and classes: the same
  /// samples as the folder it was packed from.
  ImageStreamDataset(std::shared_ptr<const ImagePack> pack, ImageStreamOptions options);

  int64_t size() const override { return static_cast<int64_t>(labels_.size()); }
  Shape sample_shape() const override { return shape_; }
  int64_t num_classes() const override { return classes_; }
  /// The sample as epoch 0 under seed 0 draws it.
  int64_t read(int64_t index, float* image) const override { return read_sample(index, 0, 0, image); }
  int64_t read_sample(int64_t index, uint64_t seed, int64_t epoch, float* image) const override;
  float pad_value(int64_t channel) const override;
  int64_t skipped_samples() const override { return skipped_.load(); }
  bool streamed() const override { return true; }

 private:
  ImageStreamDataset(std::vector<std::string> files, std::shared_ptr<const ImagePack> pack, std::vector<int64_t> labels,
                     int64_t classes, ImageStreamOptions options);
  /// Decodes and transforms image `index` into `image`; throws InputError for a bad file.
  void make(int64_t index, uint64_t seed, int64_t epoch, float* image) const;

  std::vector<std::string> files_;  // empty when the bytes come from pack_
  std::shared_ptr<const ImagePack> pack_;
  std::vector<int64_t> labels_;
  int64_t classes_;
  ImageStreamOptions o_;
  Shape shape_;
  std::vector<float> lut_mean_, lut_std_;  // per channel
  mutable std::atomic<int64_t> skipped_{0};
  mutable std::mutex bad_mu_;
  mutable std::set<int64_t> bad_;  // files named in a warning already
};

}  // namespace ingot::data
