// Mixup / CutMix on an assembled batch. The Beta draws come from Boost.Random, seeded by the
// data pipeline's Philox stream for (seed, epoch, batch), so they are reproducible and independent
// of the thread that assembles the batch.
#include "ingot/data/batch_mix.h"

#include <boost/random/beta_distribution.hpp>
#include <boost/random/mersenne_twister.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "data_rng.h"
#include "ingot/base/error.h"

namespace ingot::data {

namespace {

/// A uniform double in [0, 1) from one 32-bit word.
double unit(uint32_t word) { return static_cast<double>(word) / 4294967296.0; }

}  // namespace

MixDraw draw_mix(const BatchMix& mix, uint64_t seed, int64_t epoch, int64_t index, int64_t height, int64_t width) {
  MixDraw draw;
  if (!mix.enabled()) return draw;
  const sdk::PhiloxBlock b =
      data_random(seed, DataStream::Mix, static_cast<uint64_t>(index), static_cast<uint64_t>(epoch));
  if (unit(b.v[0]) >= mix.prob) return draw;
  const bool cutmix = mix.cutmix_alpha > 0.0 && (mix.mixup_alpha <= 0.0 || unit(b.v[1]) < mix.switch_prob);
  const double alpha = cutmix ? mix.cutmix_alpha : mix.mixup_alpha;
  boost::random::mt19937 engine(b.v[2]);
  boost::random::beta_distribution<double> beta(alpha, alpha);
  const double lambda = beta(engine);
  if (!cutmix) {
    draw.kind = MixDraw::Kind::Mixup;
    draw.lambda = lambda;
    return draw;
  }
  // torchvision's CutMix: a box of sqrt(1 - lambda) of each side around a uniform centre,
  // clipped to the image; lambda then becomes the share left outside the box.
  const sdk::PhiloxBlock c =
      data_random(seed, DataStream::Mix, static_cast<uint64_t>(index), static_cast<uint64_t>(epoch), 1);
  const int64_t cy = random_below(c.v[0], height), cx = random_below(c.v[1], width);
  const double r = 0.5 * std::sqrt(1.0 - lambda);
  const auto half_h = static_cast<int64_t>(r * static_cast<double>(height));
  const auto half_w = static_cast<int64_t>(r * static_cast<double>(width));
  draw.kind = MixDraw::Kind::Cutmix;
  draw.y0 = std::max<int64_t>(cy - half_h, 0);
  draw.y1 = std::min<int64_t>(cy + half_h, height);
  draw.x0 = std::max<int64_t>(cx - half_w, 0);
  draw.x1 = std::min<int64_t>(cx + half_w, width);
  draw.lambda =
      1.0 - static_cast<double>((draw.y1 - draw.y0) * (draw.x1 - draw.x0)) / static_cast<double>(height * width);
  return draw;
}

void apply_mix(const MixDraw& draw, int64_t classes, Tensor& inputs, Tensor& targets) {
  INGOT_CHECK(inputs.dtype() == DType::F32 && inputs.dim() == 4, "data.mix: inputs {} {} are not images",
              dtype_name(inputs.dtype()), inputs.shape().str());
  INGOT_CHECK(targets.dtype() == DType::I64 && targets.dim() == 1,
              "data.mix: targets {} {} are not one class label per sample", dtype_name(targets.dtype()),
              targets.shape().str());
  const int64_t n = inputs.size(0), channels = inputs.size(1);
  const int64_t h = inputs.size(2), w = inputs.size(3), numel = channels * h * w;
  const int64_t* labels = targets.data<int64_t>();
  Tensor soft = Tensor::empty(Shape{n, classes}, DType::F32);  // byte work: workers dispatch no op
  float* t = soft.data<float>();
  std::fill(t, t + n * classes, 0.0f);
  const float own = draw.kind == MixDraw::Kind::None ? 1.0f : static_cast<float>(draw.lambda);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t prev = (i + n - 1) % n;
    INGOT_CHECK(labels[i] >= 0 && labels[i] < classes, "data.mix: label {} outside [0, {})", labels[i], classes);
    t[i * classes + labels[i]] += own;
    t[i * classes + labels[prev]] += 1.0f - own;
  }
  targets = soft;
  if (draw.kind == MixDraw::Kind::None || n < 2) return;
  float* x = inputs.data<float>();
  // Mixed from the last sample down, each reads its neighbour before that one is mixed; only the
  // last sample (sample 0's neighbour) is kept aside, not a copy of the whole batch.
  const std::vector<float> last(x + (n - 1) * numel, x + n * numel);
  for (int64_t i = n - 1; i >= 0; --i) {
    const float* other = i > 0 ? x + (i - 1) * numel : last.data();
    float* out = x + i * numel;
    if (draw.kind == MixDraw::Kind::Mixup) {
      const auto lam = static_cast<float>(draw.lambda);
      for (int64_t k = 0; k < numel; ++k) out[k] = other[k] * (1.0f - lam) + out[k] * lam;
      continue;
    }
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t y = draw.y0; y < draw.y1; ++y) {
        const int64_t at = (c * h + y) * w + draw.x0;
        std::memcpy(out + at, other + at, static_cast<size_t>(draw.x1 - draw.x0) * sizeof(float));
      }
  }
}

}  // namespace ingot::data
