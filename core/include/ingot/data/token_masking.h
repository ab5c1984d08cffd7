// BERT's masked-language-model objective (Devlin et al. 2019), applied while the loader assembles
// a batch, as Hugging Face's DataCollatorForLanguageModeling does: each ordinary token is chosen
// with probability p (15%); a chosen token becomes [MASK] (80%), a random ordinary token (10%) or
// stays (10%), and is the only position with a target. Every draw is keyed by (seed, epoch,
// sample, position), so a resumed run or another worker count masks the same tokens.
#pragma once

#include <cstdint>

namespace ingot::data {

struct TokenMasking {
  double probability = 0.15;    ///< share of ordinary tokens chosen for prediction
  double mask = 0.8;            ///< of the chosen, the share replaced by mask_id
  double random = 0.1;          ///< of the chosen, the share replaced by a random ordinary token
  int64_t mask_id = -1;         ///< the [MASK] token
  int64_t ordinary = 0;         ///< ids in [0, ordinary) are ordinary tokens; the rest are special
  int64_t ignore_index = -100;  ///< the target of a position not chosen (the loss skips it)
};

/// Masks the `n` token ids of sample `sample` of `epoch` in place and writes their targets: the
/// original id where a token was chosen, ignore_index elsewhere. Special tokens (ids >= ordinary)
/// are never chosen. A pure function of its arguments.
void mask_tokens(const TokenMasking& masking, uint64_t seed, int64_t epoch, int64_t sample, int64_t* ids,
                 int64_t* targets, int64_t n);

}  // namespace ingot::data
