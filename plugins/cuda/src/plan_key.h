// Hash and equality for plan-cache keys that are plain structs of 64-bit integers (shapes,
// strides, dtypes, attributes): no string is formatted per call, and a key with padding (whose
// bytes would be indeterminate) does not compile.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace ingot::cuda {

template <class Key>
struct PlanKeyHash {
  static_assert(std::has_unique_object_representations_v<Key> && sizeof(Key) % sizeof(uint64_t) == 0,
                "a plan key is a struct of 64-bit integers without padding");
  size_t operator()(const Key& key) const noexcept {
    uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a over 64-bit words, then a final avalanche
    for (size_t i = 0; i < sizeof(Key) / sizeof(uint64_t); ++i) {
      uint64_t w = 0;
      std::memcpy(&w, reinterpret_cast<const unsigned char*>(&key) + i * sizeof(uint64_t), sizeof(w));
      h = (h ^ w) * 0x100000001b3ull;
    }
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return static_cast<size_t>(h);
  }
};

template <class Key>
struct PlanKeyEqual {
  bool operator()(const Key& a, const Key& b) const noexcept { return std::memcmp(&a, &b, sizeof(Key)) == 0; }
};

}  // namespace ingot::cuda
