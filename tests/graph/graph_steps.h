// Small training steps for the graph tests: forward, cross-entropy and backward of an MLP (with
// dropout), a CNN (conv, batch norm, pooling, dropout) or a ResNet-8 (residual blocks), on random
// batches.
#pragma once

#include <cstring>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "ingot/graph/capture.h"
#include "ingot/graph/executable.h"
#include "ingot/nn/loss.h"
#include "ingot/nn/presets.h"
#include "ingot/ops/random.h"
#include "ingot/runtime/registry.h"
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

/// Forward, cross-entropy and backward of a model built from fixed seeds (weights `init_seed`,
/// dropout masks `init_seed + 1`), for batches of 3 classes.
class ModelStep {
 public:
  using Factory = std::function<std::shared_ptr<nn::Sequential>(Generator*, Generator*)>;
  ModelStep(const Factory& make, uint64_t init_seed)
      : init(init_seed), dropout_gen(init_seed + 1), model(make(&init, &dropout_gen)) {
    model->train();
  }
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

/// An MLP 16 -> 12 -> 8 -> 3 with ReLU (and dropout between its Linears).
struct MlpStep : ModelStep {
  explicit MlpStep(double dropout = 0.0)
      : ModelStep([dropout](Generator* g, Generator* d) { return nn::make_mlp({{16, 12, 8, 3}, "relu", dropout}, g, d); },
                  5) {}
  static std::pair<Tensor, Tensor> batch(int64_t n, uint64_t seed) { return labelled_batch({n, 16}, 3, seed); }
};

/// The simple CNN (conv, batch norm, ReLU, max pooling, dropout) on 1x8x8 images.
struct CnnStep : ModelStep {
  CnnStep()
      : ModelStep([](Generator* g, Generator* d) { return nn::make_simple_cnn({1, 8, 8, 4, 16, 3, 0.25}, g, d); },
                  8) {}
  static std::pair<Tensor, Tensor> batch(int64_t n, uint64_t seed) { return labelled_batch({n, 1, 8, 8}, 3, seed); }
};

/// A ResNet-8 (width 4 unless told) on 1x8x8 images: batch norm -> ReLU, residual add -> ReLU.
struct ResNetStep : ModelStep {
  explicit ResNetStep(int64_t width = 4)
      : ModelStep([width](Generator* g, Generator*) { return nn::make_resnet({8, width, 1, 3}, g); }, 11) {}
  static std::pair<Tensor, Tensor> batch(int64_t n, uint64_t seed) { return labelled_batch({n, 1, 8, 8}, 3, seed); }
};

/// A step captured on batch 1 of `n` samples: `eager` runs it as warm-up, `replayed` is captured
/// (so the two models' states move alike).
template <class Step>
graph::Graph capture_step(Step& eager, Step& replayed, int64_t n) {
  const auto first = Step::batch(n, 1);
  eager.step(first);
  graph::Captured c = graph::capture([&] { return replayed.step(first); }, {first.first, first.second},
                                     replayed.params());
  REQUIRE(c.graph);
  return std::move(*c.graph);
}

/// Replays `exec` for `replayed` and runs `eager`'s step on batches 2 and 3 of `n` samples;
/// `same(got, want)` compares the losses, the gradients and the buffers (running statistics).
template <class Step, class Same>
void compare_replays(graph::Executable& exec, Step& eager, Step& replayed, int64_t n, const Same& same) {
  for (uint64_t seed = 2; seed < 4; ++seed) {
    const auto b = Step::batch(n, seed);
    eager.zero_grad();
    replayed.zero_grad();
    const Tensor want = eager.step(b).front();
    same(exec.run({b.first, b.second}, replayed.params()).front(), want);
    for (size_t k = 0; k < eager.params().size(); ++k) same(replayed.params()[k].grad(), eager.params()[k].grad());
    const auto be = eager.model->buffers(), br = replayed.model->buffers();
    REQUIRE(be.size() == br.size());
    for (size_t k = 0; k < be.size(); ++k) same(br[k], be[k]);
  }
}

/// The first and the last node that reads or writes each value of `g` (-1: none).
inline std::pair<std::vector<int>, std::vector<int>> value_lives(const graph::Graph& g) {
  std::vector<int> first(g.values.size(), -1), last(g.values.size(), -1);
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const auto* refs : {&g.nodes[i].inputs, &g.nodes[i].outputs})
      for (const graph::TensorRef& r : *refs) {
        if (!r.defined()) continue;
        if (first[r.value] < 0) first[r.value] = static_cast<int>(i);
        last[r.value] = static_cast<int>(i);
      }
  return {first, last};
}

/// Runs `check` on the reference backend alone, then with every loaded backend (cpu_onednn).
template <class Check>
void on_each_backend_set(const std::string& what, const Check& check) {
  const RestoreBackends restore;
  for (const auto& backends : backend_sets(what)) {
    BackendRegistry::instance().restrict_to(backends);
    INFO("backends: " << (backends.empty() ? "all loaded" : backends[0]));
    check(backends.empty());
  }
}

}  // namespace ingot::test
