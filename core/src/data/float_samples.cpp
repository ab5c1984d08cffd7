// Own data as an InMemoryDataset: per-channel (x - mean) / std over the float samples, label checks.
#include "float_samples.h"

#include <cstring>

#include "ingot/base/error.h"

namespace ingot::data {

std::shared_ptr<InMemoryDataset> dataset_from_floats(std::vector<float> values, const Shape& sample,
                                                     const std::vector<int64_t>& labels, int64_t num_classes,
                                                     const Normalize& normalize, const std::string& source,
                                                     const std::string& label_hint) {
  const int64_t n = static_cast<int64_t>(labels.size());
  const int64_t channels = sample[0], plane = sample[1] * sample[2];
  INGOT_CHECK(static_cast<int64_t>(values.size()) == n * channels * plane, "{}: {} values for {} samples of {}", source,
              values.size(), n, sample.str());
  const std::vector<float> mean = normalize.mean.empty() ? std::vector<float>{0.0f} : normalize.mean;
  const std::vector<float> std = normalize.std.empty() ? std::vector<float>{1.0f} : normalize.std;
  const auto fits = [&](const std::vector<float>& v) {
    return v.size() == 1 || static_cast<int64_t>(v.size()) == channels;
  };
  INGOT_CHECK_AS(fits(mean) && fits(std), ConfigError,
                 "{}: data.normalize has {} mean and {} std values for samples {} ({} channels); give one or one "
                 "per channel",
                 source, mean.size(), std.size(), sample.str(), channels);
  std::vector<float> pad(static_cast<size_t>(channels));
  for (int64_t ch = 0; ch < channels; ++ch) {
    const float m = mean[mean.size() == 1 ? 0 : static_cast<size_t>(ch)];
    const float s = std[std.size() == 1 ? 0 : static_cast<size_t>(ch)];
    pad[static_cast<size_t>(ch)] = (0.0f - m) / s;
    if (m == 0.0f && s == 1.0f) continue;
    for (int64_t i = 0; i < n; ++i) {
      float* p = values.data() + (i * channels + ch) * plane;
      for (int64_t k = 0; k < plane; ++k) p[k] = (p[k] - m) / s;
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    INGOT_CHECK_AS(labels[static_cast<size_t>(i)] >= 0 && labels[static_cast<size_t>(i)] < num_classes, InputError,
                   "{}: label {} of sample {} is outside [0, {}){}", source, labels[static_cast<size_t>(i)], i,
                   num_classes, label_hint);
  }
  Tensor images = Tensor::empty(Shape{n, sample[0], sample[1], sample[2]}, DType::F32);
  if (!values.empty()) std::memcpy(images.data<float>(), values.data(), values.size() * sizeof(float));
  Tensor label_tensor = Tensor::empty(Shape{n}, DType::I64);
  if (n > 0) std::memcpy(label_tensor.data<int64_t>(), labels.data(), labels.size() * sizeof(int64_t));
  return std::make_shared<InMemoryDataset>(images, label_tensor, num_classes, pad);
}

}  // namespace ingot::data
