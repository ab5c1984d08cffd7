// Pruning masks as torch.nn.utils.prune computes them, on host copies of the weights: L1 and
// random unstructured, one global L1 threshold, Ln structured along dim 0. A mask holds 1 (kept)
// or 0 (pruned); pruning a masked tensor again prunes among what is left, as torch's
// PruningContainer does.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "prune_config.h"

namespace ingot::prune {

using Mask = std::vector<float>;

/// Python's round(): halves to even.
int64_t round_half_even(double x);

/// How many of `n` candidates `amount` prunes (torch's _compute_nparams_toprune): a count as it
/// is, a fraction f as round(f * n). Throws ConfigError naming `what` when a count exceeds `n`.
int64_t prune_count(const Amount& amount, int64_t n, const std::string& what);

/// Sets to 0 the k entries of `mask` that are still 1 whose scores are the smallest (the lower
/// index first among equal scores: torch's topk leaves that order unspecified).
void prune_smallest(const std::vector<double>& scores, Mask& mask, int64_t k);

/// torch's l1_unstructured on the current weight `w` (already masked by `mask`): among the entries
/// still kept, the `amount` (of their number) with the smallest |w| are pruned.
void l1_unstructured(const std::vector<float>& w, Mask& mask, const Amount& amount, const std::string& what);

/// torch's random_unstructured: among the entries still kept, the `amount` with the largest of
/// `draws` (uniform values, one per entry) are pruned.
void random_unstructured(const std::vector<float>& draws, Mask& mask, const Amount& amount, const std::string& what);

/// torch's ln_structured(dim = 0) on `w` viewed as [rows, numel / rows]: among the rows not
/// already pruned whole, the `amount` (of their number) with the smallest Ln norm are pruned whole.
void ln_structured(const std::vector<float>& w, int64_t rows, Mask& mask, const Amount& amount, int64_t n,
                   const std::string& what);

/// torch's global_unstructured with L1Unstructured: one threshold over the kept entries of all
/// the tensors together; `weights[i]` and `masks[i]` belong together.
void global_unstructured(const std::vector<const std::vector<float>*>& weights, const std::vector<Mask*>& masks,
                         const Amount& amount);

/// Whether row r of `mask` (viewed as [rows, numel / rows]) has any kept entry.
std::vector<uint8_t> alive_rows(const Mask& mask, int64_t rows);

/// Entries of `mask` that are 0.
int64_t count_pruned(const Mask& mask);

}  // namespace ingot::prune
