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
  normalize_samples(values, sample, normalize, source);
  std::vector<float> pad(static_cast<size_t>(channels), 0.0f);  // a zero pixel, normalised
  normalize_samples(pad, Shape{channels, 1, 1}, normalize, source);
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
