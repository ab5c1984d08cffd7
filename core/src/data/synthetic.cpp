// Synthetic dataset: per-class patterns plus per-sample noise, every value a Philox draw.
#include "ingot/data/synthetic.h"

#include <vector>

#include "data_rng.h"

namespace ingot::data {

std::shared_ptr<InMemoryDataset> synthetic_dataset(const SyntheticSpec& spec, uint64_t seed, uint32_t stream) {
  INGOT_CHECK_AS(spec.size >= 1 && spec.channels >= 1 && spec.height >= 1 && spec.width >= 1 && spec.classes >= 1,
                 ConfigError,
                 "synthetic dataset: size, channels, height, width and classes must be >= 1, got {}, {}, "
                 "{}, {}, {}",
                 spec.size, spec.channels, spec.height, spec.width, spec.classes);
  const int64_t numel = spec.channels * spec.height * spec.width;
  INGOT_CHECK_AS(numel <= (int64_t{1} << 24) && spec.size <= (int64_t{1} << 31) / numel, ConfigError,
                 "synthetic dataset: {} samples of {}x{}x{} is over 2^31 values; make it smaller", spec.size,
                 spec.channels, spec.height, spec.width);
  const auto values_of = [&](DataStream what, uint64_t sample, uint64_t epoch, float lo, float hi, float* out) {
    for (int64_t j = 0; j < numel; j += 4) {
      const auto block = data_random(seed, what, sample, epoch, static_cast<uint32_t>(j / 4));
      for (int64_t k = j; k < j + 4 && k < numel; ++k) out[k] = sdk::philox_uniform_float(block.v[k - j], lo, hi);
    }
  };
  std::vector<float> patterns(static_cast<size_t>(spec.classes * numel));
  for (int64_t c = 0; c < spec.classes; ++c) {
    values_of(DataStream::SyntheticPattern, static_cast<uint64_t>(c), 0, -1.0f, 1.0f, patterns.data() + c * numel);
  }
  Tensor images = Tensor::empty(Shape{spec.size, spec.channels, spec.height, spec.width}, DType::F32);
  Tensor labels = Tensor::empty(Shape{spec.size}, DType::I64);
  float* img = images.data<float>();
  int64_t* lab = labels.data<int64_t>();
  // The label takes its own block (block index = all ones) so it does not depend on the shape.
  for (int64_t i = 0; i < spec.size; ++i) {
    const auto label_block = data_random(seed, DataStream::SyntheticSample, static_cast<uint64_t>(i), stream, ~0u);
    lab[i] = random_below(label_block.v[0], spec.classes);
    float* out = img + i * numel;
    values_of(DataStream::SyntheticSample, static_cast<uint64_t>(i), stream, -0.5f, 0.5f, out);
    const float* pattern = patterns.data() + lab[i] * numel;
    for (int64_t k = 0; k < numel; ++k) out[k] += pattern[k];
  }
  return std::make_shared<InMemoryDataset>(images, labels, spec.classes, std::vector<float>{0.0f});
}

}  // namespace ingot::data
