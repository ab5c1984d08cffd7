// Sampling text from a language model: the prompt is run once, then one token at a time through
// the KV cache (no recomputation of the prefix), each drawn from the last position's logits with
// temperature, top-k and top-p (nucleus) filtering — Hugging Face's generate() semantics.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "ingot/nn/gpt.h"

namespace ingot::nn {

struct SamplingOptions {
  int64_t max_tokens = 200;
  double temperature = 1.0;  ///< 0: greedy (the most likely token; top_k and top_p do not apply)
  int64_t top_k = 0;         ///< keep the k most likely tokens; 0 = all
  double top_p = 1.0;        ///< keep the smallest set whose probability reaches p; 1 = all
  uint64_t seed = 0;
};

/// Checks the options; ConfigError naming the flag (--temperature, --top-k, --top-p, --max-tokens).
void check_sampling(const SamplingOptions& options);

/// The next token from one position's logits; `draw` is a uniform number in [0, 1).
int32_t sample_token(std::span<const float> logits, const SamplingOptions& options, double draw);

/// The prompt's continuation, max_tokens ids (fewer when `stop` returns true for a token).
/// `on_token` sees each new id as it is drawn. The prompt must be 1 .. block_size tokens; when the
/// context fills, the cache restarts from the last block_size / 2 tokens (the only recomputation).
std::vector<int32_t> generate(Gpt& model, const std::vector<int32_t>& prompt, const SamplingOptions& options,
                              const std::function<void(int32_t)>& on_token = {});

}  // namespace ingot::nn
