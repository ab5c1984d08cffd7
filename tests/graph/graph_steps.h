// Small training steps for the graph tests: forward, cross-entropy and backward of an MLP (with
// dropout) or a CNN (conv, batch norm, pooling, dropout), on random batches.
#pragma once

#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "ingot/nn/loss.h"
#include "ingot/nn/presets.h"
#include "ingot/ops/random.h"
#include "test_support.h"

namespace ingot::test {

/// True when a and b have the same dtype, shape and bytes.
inline bool same_bits(const Tensor& a, const Tensor& b) {
  if (!a.defined() || !b.defined()) return a.defined() == b.defined();
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  const Tensor x = a.strided().contiguous(), y = b.strided().contiguous();
  return std::memcmp(x.storage()->data(), y.storage()->data(),
                     static_cast<size_t>(x.numel()) * dtype_size(x.dtype())) == 0 &&
         x.offset() == 0 && y.offset() == 0;
}

inline std::pair<Tensor, Tensor> labelled_batch(const Shape& shape, int64_t classes, uint64_t seed) {
  const Tensor x = random_tensor(shape, DType::F32, seed);
  std::vector<int64_t> labels;
  for (int64_t i = 0; i < shape[0]; ++i) labels.push_back(static_cast<int64_t>((seed * 7 + i * 3) % classes));
  return {x, Tensor::from_vector<int64_t>(labels, {shape[0]})};
}

struct MlpStep {
  explicit MlpStep(double dropout = 0.0) : init(5), dropout_gen(6) {
    model = nn::make_mlp({{16, 12, 8, 3}, "relu", dropout}, &init, &dropout_gen);
    model->train();
  }
  static std::pair<Tensor, Tensor> batch(int64_t n, uint64_t seed) { return labelled_batch({n, 16}, 3, seed); }
  std::vector<Tensor> step(const std::pair<Tensor, Tensor>& b) {
    const Tensor loss = nn::cross_entropy((*model)(b.first), b.second);
    loss.backward();
    return {loss};
  }
  std::vector<Tensor> params() const { return model->parameters(); }
  void zero_grad() const {
    for (const Tensor& p : model->parameters()) p.set_grad(Tensor());
  }
  Generator init, dropout_gen;
  std::shared_ptr<nn::Sequential> model;
};

struct CnnStep {
  CnnStep() : init(8), dropout_gen(9) {
    model = nn::make_simple_cnn({1, 8, 8, 4, 16, 3, 0.25}, &init, &dropout_gen);
    model->train();
  }
  static std::pair<Tensor, Tensor> batch(int64_t n, uint64_t seed) { return labelled_batch({n, 1, 8, 8}, 3, seed); }
  std::vector<Tensor> step(const std::pair<Tensor, Tensor>& b) {
    const Tensor loss = nn::cross_entropy((*model)(b.first), b.second);
    loss.backward();
    return {loss};
  }
  std::vector<Tensor> params() const { return model->parameters(); }
  void zero_grad() const {
    for (const Tensor& p : model->parameters()) p.set_grad(Tensor());
  }
  Generator init, dropout_gen;
  std::shared_ptr<nn::Sequential> model;
};

}  // namespace ingot::test
