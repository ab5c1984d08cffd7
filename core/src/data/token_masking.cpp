// mask_tokens: one Philox block of four words per position — choose, what to put, which random id.
#include "ingot/data/token_masking.h"

#include "data_rng.h"

namespace ingot::data {

void mask_tokens(const TokenMasking& m, uint64_t seed, int64_t epoch, int64_t sample, int64_t* ids, int64_t* targets,
                 int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    targets[j] = m.ignore_index;
    if (ids[j] < 0 || ids[j] >= m.ordinary) continue;  // [PAD], [CLS], [SEP], [MASK]
    const sdk::PhiloxBlock r = data_random(seed, DataStream::TokenMask, static_cast<uint64_t>(sample),
                                           static_cast<uint64_t>(epoch), static_cast<uint32_t>(j));
    if (!sdk::philox_bernoulli(r.v[0], m.probability)) continue;
    targets[j] = ids[j];
    const double u = sdk::philox_unit_double(r.v[1]);
    if (u < m.mask)
      ids[j] = m.mask_id;
    else if (u < m.mask + m.random)
      ids[j] = random_below(r.v[2], m.ordinary);
  }
}

}  // namespace ingot::data
