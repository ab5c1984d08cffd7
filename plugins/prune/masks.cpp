// The mask arithmetic of torch.nn.utils.prune (torch/nn/utils/prune.py, 1.13), on host vectors.
#include "masks.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "ingot/base/error.h"

namespace ingot::prune {

int64_t round_half_even(double x) { return static_cast<int64_t>(std::nearbyint(x)); }

int64_t prune_count(const Amount& amount, int64_t n, const std::string& what) {
  if (!amount.is_count) return round_half_even(amount.fraction * static_cast<double>(n));
  if (amount.count > n)
    throw ConfigError(fmt::format("prune: amount={} is more than the {} prunable entries of {}; give a smaller "
                                  "count or a fraction",
                                  amount.count, n, what));
  return amount.count;
}

void prune_smallest(const std::vector<double>& scores, Mask& mask, int64_t k) {
  if (k <= 0) return;
  std::vector<int64_t> alive;
  for (size_t i = 0; i < mask.size(); ++i)
    if (mask[i] == 1.0f) alive.push_back(static_cast<int64_t>(i));
  k = std::min<int64_t>(k, static_cast<int64_t>(alive.size()));
  if (k == 0) return;
  const auto less = [&](int64_t a, int64_t b) { return scores[a] < scores[b] || (scores[a] == scores[b] && a < b); };
  std::nth_element(alive.begin(), alive.begin() + (k - 1), alive.end(), less);
  for (int64_t i = 0; i < k; ++i) mask[alive[i]] = 0.0f;
}

namespace {

int64_t kept(const Mask& mask) { return static_cast<int64_t>(std::count(mask.begin(), mask.end(), 1.0f)); }

}  // namespace

void l1_unstructured(const std::vector<float>& w, Mask& mask, const Amount& amount, const std::string& what) {
  std::vector<double> scores(w.size());
  for (size_t i = 0; i < w.size(); ++i) scores[i] = std::fabs(static_cast<double>(w[i]));
  prune_smallest(scores, mask, prune_count(amount, kept(mask), what));
}

void random_unstructured(const std::vector<float>& draws, Mask& mask, const Amount& amount, const std::string& what) {
  std::vector<double> scores(draws.size());
  for (size_t i = 0; i < draws.size(); ++i) scores[i] = -static_cast<double>(draws[i]);
  prune_smallest(scores, mask, prune_count(amount, kept(mask), what));
}

std::vector<uint8_t> alive_rows(const Mask& mask, int64_t rows) {
  const size_t cols = rows > 0 ? mask.size() / static_cast<size_t>(rows) : 0;
  std::vector<uint8_t> alive(static_cast<size_t>(rows), 0);
  for (size_t r = 0; r < alive.size(); ++r)
    for (size_t c = 0; c < cols && !alive[r]; ++c) alive[r] = mask[r * cols + c] != 0.0f;
  return alive;
}

void ln_structured(const std::vector<float>& w, int64_t rows, Mask& mask, const Amount& amount, int64_t n,
                   const std::string& what) {
  const size_t cols = w.size() / static_cast<size_t>(rows);
  const std::vector<uint8_t> alive = alive_rows(mask, rows);
  // Rows pruned whole before are out of the running (torch's PruningContainer slices them away).
  std::vector<double> norms(static_cast<size_t>(rows), 0.0);
  Mask row_mask(static_cast<size_t>(rows));
  for (size_t r = 0; r < norms.size(); ++r) {
    row_mask[r] = alive[r] ? 1.0f : 0.0f;
    double s = 0.0;
    for (size_t c = 0; c < cols; ++c) {
      const double v = std::fabs(static_cast<double>(w[r * cols + c]));
      s += n == 1 ? v : n == 2 ? v * v : std::pow(v, static_cast<double>(n));
    }
    norms[r] = n == 1 ? s : std::pow(s, 1.0 / static_cast<double>(n));
  }
  prune_smallest(norms, row_mask, prune_count(amount, kept(row_mask), what));
  for (size_t r = 0; r < norms.size(); ++r)
    if (row_mask[r] == 0.0f) std::fill(mask.begin() + r * cols, mask.begin() + (r + 1) * cols, 0.0f);
}

void global_unstructured(const std::vector<const std::vector<float>*>& weights, const std::vector<Mask*>& masks,
                         const Amount& amount) {
  std::vector<double> scores;
  Mask all;
  for (size_t t = 0; t < weights.size(); ++t) {
    for (const float v : *weights[t]) scores.push_back(std::fabs(static_cast<double>(v)));
    all.insert(all.end(), masks[t]->begin(), masks[t]->end());
  }
  prune_smallest(scores, all, prune_count(amount, kept(all), "the chosen layers together"));
  size_t at = 0;
  for (Mask* m : masks) {
    std::copy(all.begin() + static_cast<std::ptrdiff_t>(at), all.begin() + static_cast<std::ptrdiff_t>(at + m->size()),
              m->begin());
    at += m->size();
  }
}

int64_t count_pruned(const Mask& mask) { return static_cast<int64_t>(std::count(mask.begin(), mask.end(), 0.0f)); }

}  // namespace ingot::prune
