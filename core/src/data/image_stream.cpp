// ImageStreamDataset: a read is the image's bytes (its file, or its record in a pack) -> header
// (size) -> the sample's draws -> decode (reduced when the draws allow it) -> transforms ->
// normalised floats. A bad file either throws its one-line InputError or, under the skip policy,
// is replaced by the next good file of the dataset (the same one for any worker count), named
// once in a warning and counted.
#include "ingot/data/image_stream.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <span>

#include "ingot/base/error.h"
#include "ingot/data/image_pack.h"
#include "ingot/runtime/logging.h"

namespace ingot::data {

namespace {

float per_channel(const std::vector<float>& values, int64_t channel, float fallback) {
  if (values.empty()) return fallback;
  return values.size() == 1 ? values[0] : values[static_cast<size_t>(channel)];
}

std::vector<int64_t> pack_labels(const ImagePack& pack) {
  std::vector<int64_t> labels(static_cast<size_t>(pack.size()));
  for (int64_t i = 0; i < pack.size(); ++i) labels[static_cast<size_t>(i)] = pack.label(i);
  return labels;
}

}  // namespace

BadImagePolicy parse_bad_image_policy(const std::string& text, const std::string& where) {
  if (text == "error") return BadImagePolicy::Error;
  if (text == "skip") return BadImagePolicy::Skip;
  throw ConfigError(
      fmt::format("{}: '{}' is not error (stop at a bad image) or skip (count it and read the next one)", where, text));
}

ImageStreamDataset::ImageStreamDataset(std::vector<std::string> files, std::vector<int64_t> labels, int64_t classes,
                                       ImageStreamOptions options)
    : ImageStreamDataset(std::move(files), nullptr, std::move(labels), classes, std::move(options)) {}

ImageStreamDataset::ImageStreamDataset(std::shared_ptr<const ImagePack> pack, ImageStreamOptions options)
    : ImageStreamDataset({}, pack, pack_labels(*pack), static_cast<int64_t>(pack->class_names().size()),
                         std::move(options)) {}

ImageStreamDataset::ImageStreamDataset(std::vector<std::string> files, std::shared_ptr<const ImagePack> pack,
                                       std::vector<int64_t> labels, int64_t classes, ImageStreamOptions options)
    : files_(std::move(files)),
      pack_(std::move(pack)),
      labels_(std::move(labels)),
      classes_(classes),
      o_(std::move(options)) {
  INGOT_CHECK((pack_ || files_.size() == labels_.size()) && !labels_.empty(), "{}: {} files for {} labels", o_.source,
              files_.size(), labels_.size());
  INGOT_CHECK_AS(o_.sample.size() == 3 && (o_.sample[0] == 1 || o_.sample[0] == 3), ConfigError,
                 "{}: images give 1 (grey) or 3 (RGB) channels; model.input_shape must be [1 or 3, H, W], got {}",
                 o_.source, o_.sample.str());
  shape_ = o_.transforms.empty() ? o_.sample : o_.transforms.output_shape(o_.sample[0]);
  for (int64_t c = 0; c < shape_[0]; ++c) {
    lut_mean_.push_back(per_channel(o_.normalize.mean, c, 0.0f));
    lut_std_.push_back(per_channel(o_.normalize.std, c, 1.0f));
  }
  for (int64_t label : labels_)
    INGOT_CHECK(label >= 0 && label < classes_, "{}: label {} outside [0, {})", o_.source, label, classes_);
}

float ImageStreamDataset::pad_value(int64_t channel) const {
  return (0.0f - lut_mean_[static_cast<size_t>(channel)]) / lut_std_[static_cast<size_t>(channel)];
}

void ImageStreamDataset::make(int64_t index, uint64_t seed, int64_t epoch, float* image) const {
  // The bytes come from the image's file or from its pack; the rest does not know which.
  const std::string packed_name = pack_ ? pack_->where(index) : std::string();
  const std::string& name = pack_ ? packed_name : files_[static_cast<size_t>(index)];
  std::vector<uint8_t> file_bytes;
  if (!pack_) file_bytes = read_image_file(name);
  const std::span<const uint8_t> bytes = pack_ ? pack_->bytes(index) : std::span<const uint8_t>(file_bytes);
  const int64_t channels = shape_[0], plane = shape_[1] * shape_[2];
  if (o_.transforms.empty()) {  // the in-memory image_folder's bytes
    const std::vector<uint8_t> px =
        image_sample(decode_image(bytes, name, 1, o_.exif_orientation), o_.sample, o_.resize, o_.antialias);
    std::copy(px.begin(), px.end(), image);
  } else {
    const ImageInfo info = probe_image(bytes, name, o_.exif_orientation);
    TransformRng rng(seed, epoch, index);
    const TransformPlan plan = o_.transforms.plan(info.height, info.width, rng);
    const int64_t divisor = info.jpeg && o_.reduced_decode ? plan.max_decode_divisor : 1;
    o_.transforms.apply(plan, decode_image(bytes, name, divisor, o_.exif_orientation), divisor, channels, image);
  }
  if (pack_) pack_->release(index);
  for (int64_t c = 0; c < channels; ++c) {
    const float m = lut_mean_[static_cast<size_t>(c)], s = lut_std_[static_cast<size_t>(c)];
    float* p = image + c * plane;
    for (int64_t k = 0; k < plane; ++k) p[k] = (p[k] / 255.0f - m) / s;
  }
}

int64_t ImageStreamDataset::read_sample(int64_t index, uint64_t seed, int64_t epoch, float* image) const {
  INGOT_CHECK(index >= 0 && index < size(), "{}: sample {} outside [0, {})", o_.source, index, size());
  if (o_.on_bad_image == BadImagePolicy::Error) {
    make(index, seed, epoch, image);
    return labels_[static_cast<size_t>(index)];
  }
  // Skip: the next file that decodes stands in, with its own label and draws.
  for (int64_t k = 0; k < size(); ++k) {
    const int64_t i = (index + k) % size();
    try {
      make(i, seed, epoch, image);
      return labels_[static_cast<size_t>(i)];
    } catch (const InputError& e) {
      ++skipped_;
      std::lock_guard lock(bad_mu_);
      if (bad_.insert(i).second)
        log_warn("{}: skipped a bad image (data.image_folder.on_bad_image: skip), read the next one instead: {}",
                 o_.source, e.what());
    }
  }
  throw InputError(fmt::format("{}: no image of the {} files decodes; check the folder", o_.source, size()));
}

}  // namespace ingot::data
