// generate: prefill, then decode step by step; the draws come from a counter-based generator
// keyed by the seed, so a run's sample depends on the seed alone.
#include "ingot/nn/generate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "ingot/base/error.h"
#include "ingot/base/grad_mode.h"

namespace ingot::nn {
namespace {

/// splitmix64: the draw for step `i` of seed `seed`, uniform in [0, 1).
double uniform_draw(uint64_t seed, uint64_t i) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ull * (i + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53;
}

}  // namespace

void check_sampling(const SamplingOptions& o) {
  INGOT_CHECK_AS(o.max_tokens >= 1, ConfigError, "--max-tokens {}: must be >= 1", o.max_tokens);
  INGOT_CHECK_AS(std::isfinite(o.temperature) && o.temperature >= 0.0, ConfigError,
                 "--temperature {}: must be >= 0 (0 = greedy)", o.temperature);
  INGOT_CHECK_AS(o.top_k >= 0, ConfigError, "--top-k {}: must be >= 0 (0 = every token)", o.top_k);
  INGOT_CHECK_AS(o.top_p > 0.0 && o.top_p <= 1.0, ConfigError, "--top-p {}: must be in (0, 1]", o.top_p);
}

int32_t sample_token(std::span<const float> logits, const SamplingOptions& o, double draw) {
  const auto v = static_cast<int64_t>(logits.size());
  INGOT_CHECK(v > 0, "sample_token: no logits");
  if (o.temperature == 0.0)
    return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
  std::vector<int32_t> order(static_cast<size_t>(v));
  std::iota(order.begin(), order.end(), 0);
  // Most likely first; ties by id, so the result does not depend on the sort's stability.
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return logits[a] != logits[b] ? logits[a] > logits[b] : a < b;
  });
  int64_t keep = o.top_k > 0 ? std::min(o.top_k, v) : v;
  const double top = logits[order[0]] / o.temperature;
  std::vector<double> p(static_cast<size_t>(keep));
  double total = 0.0;
  for (int64_t i = 0; i < keep; ++i) total += p[i] = std::exp(logits[order[i]] / o.temperature - top);
  if (o.top_p < 1.0) {  // the smallest prefix whose mass reaches top_p (at least one token)
    double mass = 0.0;
    int64_t n = 0;
    while (n < keep && mass < o.top_p * total) mass += p[n++];
    keep = std::max<int64_t>(n, 1);
    total = std::accumulate(p.begin(), p.begin() + keep, 0.0);
  }
  double target = draw * total;
  for (int64_t i = 0; i < keep; ++i) {
    target -= p[i];
    if (target < 0.0) return order[i];
  }
  return order[keep - 1];
}

std::vector<int32_t> generate(Gpt& model, const std::vector<int32_t>& prompt, const SamplingOptions& o,
                              const std::function<void(int32_t)>& on_token) {
  check_sampling(o);
  const int64_t context = model.config().block_size;
  INGOT_CHECK_AS(!prompt.empty(), InputError, "generate: the prompt is empty; give at least one token");
  INGOT_CHECK_AS(static_cast<int64_t>(prompt.size()) <= context, InputError,
                 "generate: the prompt has {} tokens, more than the model's context of {} (block_size): shorten it",
                 prompt.size(), context);
  for (int32_t id : prompt)
    INGOT_CHECK_AS(id >= 0 && id < model.config().vocab_size, InputError,
                   "generate: prompt token {} is outside the model's vocabulary of {}", id, model.config().vocab_size);
  const NoGradGuard no_grad;
  const bool was_training = model.is_training();
  model.eval();
  const Device device = model.device();
  const auto ids_tensor = [&](std::span<const int32_t> ids) {
    std::vector<int64_t> v(ids.begin(), ids.end());
    return Tensor::from_vector(v, Shape{1, static_cast<int64_t>(v.size())}).to(device);
  };
  std::vector<int32_t> all = prompt, out;
  std::vector<KvCache> caches;
  Tensor logits = model.decode(ids_tensor(prompt), caches);
  for (int64_t step = 0; step < o.max_tokens; ++step) {
    const Tensor last = logits.slice(1, logits.size(1) - 1, logits.size(1)).reshape(Shape{-1}).to(DType::F32);
    const std::vector<float> row = last.to(Device::cpu()).to_vector<float>();
    const int32_t next = sample_token(row, o, uniform_draw(o.seed, static_cast<uint64_t>(step)));
    out.push_back(next);
    all.push_back(next);
    if (on_token) on_token(next);
    if (step + 1 == o.max_tokens) break;
    if (caches.front().length() + 1 > context) {  // the context is full: restart from its second half
      caches.clear();
      const std::span<const int32_t> tail(all.data() + all.size() - static_cast<size_t>(context / 2 + 1),
                                          static_cast<size_t>(context / 2 + 1));
      logits = model.decode(ids_tensor(tail), caches);
    } else {
      logits = model.decode(ids_tensor(std::span<const int32_t>(&next, 1)), caches);
    }
  }
  model.train(was_training);
  return out;
}

}  // namespace ingot::nn
