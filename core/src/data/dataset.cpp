// The Dataset defaults (f32 samples, one label) and the in-memory image classification dataset:
// one normalised f32 buffer and one int64 label buffer.
#include "ingot/data/dataset.h"

#include <fmt/ranges.h>

#include <array>
#include <cstring>

namespace ingot::data {
namespace {

float per_channel(const std::vector<float>& values, int64_t channel) {
  return values.size() == 1 ? values[0] : values[static_cast<size_t>(channel)];
}

}  // namespace

void Dataset::read_ids(int64_t, int64_t*, int64_t*) const {
  throw Error(fmt::format("this dataset's samples are {} values [{}], not token ids", dtype_name(input_dtype()),
                          sample_shape().str()));
}

int64_t TokenDataset::read(int64_t, float*) const {
  throw Error(fmt::format("this dataset's samples are token ids {}, not f32 values", sample_shape().str()));
}

float TokenDataset::pad_value(int64_t) const {
  throw Error("a dataset of token ids has no pixels to pad: data.augment is for images");
}

InMemoryDataset::InMemoryDataset(Tensor images, Tensor labels, int64_t num_classes, std::vector<float> pad_values)
    : images_(images.contiguous()),
      labels_(labels.contiguous()),
      num_classes_(num_classes),
      pad_values_(std::move(pad_values)) {
  INGOT_CHECK_SHAPE(images_.dtype() == DType::F32 && images_.dim() == 4,
                    "InMemoryDataset: images must be f32 [N, C, H, W], got {} {}", dtype_name(images_.dtype()),
                    images_.shape().str());
  INGOT_CHECK_SHAPE(labels_.dtype() == DType::I64 && labels_.dim() == 1 && labels_.size(0) == images_.size(0),
                    "InMemoryDataset: labels must be i64 [{}], got {} {}", images_.size(0), dtype_name(labels_.dtype()),
                    labels_.shape().str());
  INGOT_CHECK(num_classes_ >= 1, "InMemoryDataset: num_classes must be >= 1, got {}", num_classes_);
  INGOT_CHECK(pad_values_.size() == 1 || static_cast<int64_t>(pad_values_.size()) == images_.size(1),
              "InMemoryDataset: {} pad values for {} channels; give one or one per channel", pad_values_.size(),
              images_.size(1));
}

InMemoryDataset InMemoryDataset::from_bytes(const std::vector<uint8_t>& images, const std::vector<int64_t>& image_dims,
                                            const std::vector<uint8_t>& labels, const std::vector<int64_t>& label_dims,
                                            int64_t num_classes, const Normalize& normalize,
                                            const std::string& source) {
  INGOT_CHECK_AS(image_dims.size() == 3 || image_dims.size() == 4, InputError,
                 "{}: images must have 3 dims [N, H, W] or 4 [N, C, H, W], got {}; is this an image file?", source,
                 fmt::join(image_dims, "x"));
  INGOT_CHECK_AS(label_dims.size() == 1, InputError, "{}: labels must have 1 dim [N], got {}; is this a label file?",
                 source, fmt::join(label_dims, "x"));
  const int64_t n = image_dims[0];
  const int64_t c = image_dims.size() == 4 ? image_dims[1] : 1;
  const int64_t h = image_dims[image_dims.size() - 2];
  const int64_t w = image_dims.back();
  INGOT_CHECK_AS(label_dims[0] == n, InputError, "{}: {} images but {} labels; the files do not belong together",
                 source, n, label_dims[0]);
  INGOT_CHECK_AS(static_cast<int64_t>(images.size()) == n * c * h * w && static_cast<int64_t>(labels.size()) == n,
                 InputError, "{}: buffer sizes do not match the dims", source);
  const size_t channels = static_cast<size_t>(c);
  INGOT_CHECK_AS((normalize.mean.size() == 1 || normalize.mean.size() == channels) &&
                     (normalize.std.size() == 1 || normalize.std.size() == channels),
                 ConfigError,
                 "{}: normalize has {} mean and {} std values for {} channels; give one or one per channel", source,
                 normalize.mean.size(), normalize.std.size(), c);
  for (float s : normalize.std) {
    INGOT_CHECK_AS(s > 0.0f, ConfigError, "{}: normalize std must be > 0, got {}", source, s);
  }

  // One lookup table per channel: the same float ops as ToTensor + Normalize, done 256 times.
  std::vector<std::array<float, 256>> lut(channels);
  std::vector<float> pad(channels);
  for (size_t ch = 0; ch < channels; ++ch) {
    const float mean = per_channel(normalize.mean, static_cast<int64_t>(ch));
    const float std = per_channel(normalize.std, static_cast<int64_t>(ch));
    for (int v = 0; v < 256; ++v) lut[ch][v] = (static_cast<float>(v) / 255.0f - mean) / std;
    pad[ch] = lut[ch][0];
  }
  Tensor image_tensor = Tensor::empty(Shape{n, c, h, w}, DType::F32);
  float* dst = image_tensor.data<float>();
  const int64_t plane = h * w;
  for (int64_t i = 0; i < n * c; ++i) {
    const auto& table = lut[static_cast<size_t>(i % c)];
    const uint8_t* src = images.data() + i * plane;
    float* out = dst + i * plane;
    for (int64_t p = 0; p < plane; ++p) out[p] = table[src[p]];
  }
  Tensor label_tensor = Tensor::empty(Shape{n}, DType::I64);
  int64_t* lab = label_tensor.data<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    lab[i] = labels[static_cast<size_t>(i)];
    INGOT_CHECK_AS(lab[i] < num_classes, InputError,
                   "{}: label {} of sample {} is outside [0, {}); the label file is corrupt, re-download it", source,
                   lab[i], i, num_classes);
  }
  return InMemoryDataset(image_tensor, label_tensor, num_classes, pad);
}

Shape InMemoryDataset::sample_shape() const { return Shape{images_.size(1), images_.size(2), images_.size(3)}; }

int64_t InMemoryDataset::read(int64_t index, float* image) const {
  INGOT_CHECK(index >= 0 && index < size(), "InMemoryDataset: sample {} outside [0, {})", index, size());
  const int64_t numel = sample_numel();
  std::memcpy(image, images_.data<float>() + index * numel, static_cast<size_t>(numel) * sizeof(float));
  return labels_.data<int64_t>()[index];
}

float InMemoryDataset::pad_value(int64_t channel) const { return per_channel(pad_values_, channel); }

void normalize_samples(std::vector<float>& values, const Shape& sample, const Normalize& normalize,
                       const std::string& source) {
  const int64_t channels = sample[0], plane = sample.numel() / std::max<int64_t>(channels, 1);
  const std::vector<float> mean = normalize.mean.empty() ? std::vector<float>{0.0f} : normalize.mean;
  const std::vector<float> std = normalize.std.empty() ? std::vector<float>{1.0f} : normalize.std;
  const auto fits = [&](const std::vector<float>& v) {
    return v.size() == 1 || static_cast<int64_t>(v.size()) == channels;
  };
  INGOT_CHECK_AS(fits(mean) && fits(std), ConfigError,
                 "{}: data.normalize has {} mean and {} std values for samples {} ({} channels); give one or one "
                 "per channel",
                 source, mean.size(), std.size(), sample.str(), channels);
  const int64_t n = static_cast<int64_t>(values.size()) / std::max<int64_t>(sample.numel(), 1);
  for (int64_t ch = 0; ch < channels; ++ch) {
    const float m = per_channel(mean, ch), s = per_channel(std, ch);
    if (m == 0.0f && s == 1.0f) continue;
    for (int64_t i = 0; i < n; ++i) {
      float* p = values.data() + (i * channels + ch) * plane;
      for (int64_t k = 0; k < plane; ++k) p[k] = (p[k] - m) / s;
    }
  }
}

}  // namespace ingot::data
