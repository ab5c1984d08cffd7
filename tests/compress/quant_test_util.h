// Helpers of the quant plugin's tests: small models with non-trivial BatchNorm statistics,
// synthetic data loaders, and static quantization as the stage runs it.
#pragma once

#include <memory>
#include <vector>

#include "calibrate.h"
#include "converter.h"
#include "ingot/base/grad_mode.h"
#include "ingot/data/data_loader.h"
#include "ingot/data/synthetic.h"
#include "ingot/nn/batch_norm.h"
#include "ingot/nn/loss.h"
#include "ingot/nn/presets.h"
#include "ingot/ops/random.h"
#include "ingot/optim/adam.h"
#include "layer_units.h"

namespace ingot::quant::test_util {

/// Gives every BatchNorm2d of `model` random affine parameters and running statistics (seeded).
inline void randomize_batch_norms(nn::Module& model, uint64_t seed) {
  NoGradGuard no_grad;
  Generator gen(seed);
  for (const auto& [name, m] : model.named_modules()) {
    auto* bn = dynamic_cast<nn::BatchNorm2d*>(m);
    if (bn == nullptr) continue;
    const Shape c{bn->num_features()};
    bn->weight().copy_(uniform(c, 0.5, 1.5, DType::F32, &gen));
    bn->bias().copy_(uniform(c, -0.3, 0.3, DType::F32, &gen));
    bn->running_mean().copy_(uniform(c, -0.2, 0.2, DType::F32, &gen));
    bn->running_var().copy_(uniform(c, 0.3, 2.0, DType::F32, &gen));
  }
}

/// simple_cnn on 1 x 12 x 12 images (width channels, hidden units, 5 classes), BN randomised, eval.
inline std::shared_ptr<nn::Sequential> small_cnn(uint64_t seed, int64_t width = 8, int64_t hidden = 32,
                                                 int64_t size = 12) {
  Generator gen(seed);
  nn::SimpleCnnOptions o;
  o.height = o.width = size;
  o.channels = width;
  o.hidden = hidden;
  o.classes = 5;
  auto m = nn::make_simple_cnn(o, &gen);  // Dropout draws from the default generator (gen dies here)
  randomize_batch_norms(*m, seed + 1);
  m->eval();
  return m;
}

/// Synthetic images matching small_cnn: split 0 (train) or 1 (test), `n` samples.
inline std::unique_ptr<data::DataLoader> loader(int64_t n, uint32_t split, int64_t batch = 32, int64_t size = 12,
                                                int64_t channels = 1) {
  data::SyntheticSpec spec;
  spec.size = n;
  spec.channels = channels;
  spec.height = spec.width = size;
  spec.classes = 5;
  data::LoaderOptions o;
  o.batch_size = batch;
  return std::make_unique<data::DataLoader>(data::synthetic_dataset(spec, 7, split), o);
}

/// A few epochs of Adam (lr 0.01) on `l`'s batches with cross-entropy; the model is left in eval.
inline void train_briefly(nn::Module& model, data::DataLoader& l, int64_t epochs = 2) {
  optim::Adam opt(model.parameters(), optim::AdamOptions{0.01});
  model.train();
  for (int64_t e = 0; e < epochs; ++e) {
    l.begin_epoch(e);
    while (auto b = l.next()) {
      opt.zero_grad();
      nn::cross_entropy(model(b->inputs), b->targets).backward();
      opt.step();
    }
  }
  model.eval();
}

/// Static quantization of `model` as the stage does it (fold, calibrate on `calib`, convert);
/// the converter is returned with every unit installed in int8.
inline std::unique_ptr<Converter> quantize_static(nn::Module& model, std::vector<Unit>& units, data::DataLoader& calib,
                                                  const QuantOptions& o = {}, const ObserverSpec& obs = {},
                                                  int64_t batches = 4) {
  model.eval();
  units = find_units(model, false);
  fold_units(model, units);
  calibrate(model, units, calib, batches, obs, o.reduce_range);
  auto c = std::make_unique<Converter>(model, units, o);
  c->install_all();
  return c;
}

/// The model's outputs on every batch of `l`, stacked in one f32 host tensor.
inline std::vector<float> outputs(nn::Module& model, data::DataLoader& l) {
  NoGradGuard no_grad;
  std::vector<float> out;
  l.begin_epoch(0);
  while (auto b = l.next()) {
    const std::vector<float> y = model(b->inputs).to_vector<float>();
    out.insert(out.end(), y.begin(), y.end());
  }
  return out;
}

/// Fraction of rows (of `classes` logits) whose argmax agree.
inline double argmax_agreement(const std::vector<float>& a, const std::vector<float>& b, size_t classes) {
  size_t same = 0, rows = a.size() / classes;
  for (size_t r = 0; r < rows; ++r) {
    const auto row_a = a.begin() + static_cast<std::ptrdiff_t>(r * classes);
    const auto row_b = b.begin() + static_cast<std::ptrdiff_t>(r * classes);
    same += std::max_element(row_a, row_a + static_cast<std::ptrdiff_t>(classes)) - row_a ==
                    std::max_element(row_b, row_b + static_cast<std::ptrdiff_t>(classes)) - row_b
                ? 1
                : 0;
  }
  return static_cast<double>(same) / static_cast<double>(rows);
}

}  // namespace ingot::quant::test_util
