// Private: the Philox counters of the data pipeline's random draws (docs/architecture.md: random numbers).
// Op streams use counters {c_lo, c_hi, 0, 0}; data streams set the last word to a tag, so the two
// never overlap for the same seed, and every draw is a pure function of (seed, epoch, sample).
#pragma once

#include <cstdint>

#include "ingot/plugin/philox.h"

namespace ingot::data {

enum class DataStream : uint32_t {
  Shuffle = 1,
  Augment = 2,
  SyntheticPattern = 3,
  SyntheticSample = 4,
  TokenMask = 5,
  Transform = 6,
  Mix = 7
};

/// Four random words for (seed, stream, sample, epoch, block): block numbers the 4-word groups
/// when one sample needs more than four draws.
inline sdk::PhiloxBlock data_random(uint64_t seed, DataStream stream, uint64_t sample, uint64_t epoch,
                                    uint32_t block = 0) {
  const sdk::PhiloxBlock counter{{static_cast<uint32_t>(sample), static_cast<uint32_t>(epoch),
                                  static_cast<uint32_t>(sample >> 32) ^ block,
                                  0xDA7A0000u | static_cast<uint32_t>(stream)}};
  return sdk::philox4x32_10(counter, static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
}

/// An integer uniform in [0, n) from one 32-bit word (n small: the bias is below n / 2^32).
inline int64_t random_below(uint32_t word, int64_t n) {
  return static_cast<int64_t>((static_cast<uint64_t>(word) * static_cast<uint64_t>(n)) >> 32);
}

}  // namespace ingot::data
