// How SORT, TOPK and SCATTER_ADD use the radix sort (radix_sort.h): the path a call takes and the
// widths of the keys it sorts. Host-only and pure, so the routing is tested without a GPU.
#pragma once

#include <cstdint>

#include "ingot/plugin/ingot_plugin.h"

namespace ingot::cuda {

/// Bits needed to write `x` (0 for 0).
inline int bits_for(uint64_t x) {
  int bits = 0;
  for (; x != 0; x >>= 1) ++bits;
  return bits;
}

/// Width of a dtype's order-preserving sort key (radix passes grow with it).
inline int sort_key_bits(int32_t dtype) {
  switch (dtype) {
    case INGOT_F64:
    case INGOT_I64:
      return 64;
    case INGOT_F32:
    case INGOT_I32:
      return 32;
    case INGOT_F16:
    case INGOT_BF16:
      return 16;
    default:
      return 8;
  }
}

/// Rank: every element counts the elements before it in its lane, one block per lane (O(n^2) per
/// lane, no scratch, best for short lanes). Radix32 / Radix64: one stable radix sort of
/// (lane << key_bits | key) in 32 / 64 bits. RadixTwoPass: 64-bit keys in several lanes: sort by
/// key, then stably by lane. Decline: 2^32 elements or more (positions are 32-bit).
enum class SortPath { Rank, Radix32, Radix64, RadixTwoPass, Decline };

struct SortPlan {
  SortPath path;
  int key_bits;   // the dtype's key width
  int lane_bits;  // bits of the lane number above the key (0: one lane, or two passes)
  int end_bit;    // bits the (first) radix sort looks at
};

/// Lanes up to kRankMaxLane long whose total rank work n_lanes * n^2 stays under kRankMaxWork
/// take the rank kernel (a launch, no scratch); everything else the radix sort.
constexpr int64_t kRankMaxLane = 1024;
constexpr int64_t kRankMaxWork = int64_t{1} << 26;
constexpr int64_t kMaxSortElements = (int64_t{1} << 32) - 1;

/// The path for `n_lanes` lanes of `n` elements of `dtype`.
inline SortPlan plan_sort(int64_t n_lanes, int64_t n, int32_t dtype) {
  const int key_bits = sort_key_bits(dtype);
  if (n_lanes <= 0 || n <= 0) return {SortPath::Rank, key_bits, 0, 0};
  if (n <= kRankMaxLane && n_lanes <= kRankMaxWork / (n * n)) return {SortPath::Rank, key_bits, 0, 0};
  if (n_lanes > kMaxSortElements / n) return {SortPath::Decline, key_bits, 0, 0};
  const int lane_bits = bits_for(static_cast<uint64_t>(n_lanes - 1));
  if (key_bits + lane_bits <= 32) return {SortPath::Radix32, key_bits, lane_bits, key_bits + lane_bits};
  if (key_bits + lane_bits <= 64) return {SortPath::Radix64, key_bits, lane_bits, key_bits + lane_bits};
  return {SortPath::RadixTwoPass, key_bits, 0, key_bits};
}

/// SCATTER_ADD sorts the key lane * (bound + 1) + index (bound = the out-of-range marker) with the
/// index's element positions: the key's width in bits (at least 1), or -1 when the key does not
/// fit 64 bits or the index has 2^32 elements or more.
inline int scatter_add_key_bits(int64_t n_lanes, int64_t bound, int64_t n_index) {
  if (n_lanes < 0 || bound < 0 || bound == INT64_MAX || n_index < 0 || n_index > kMaxSortElements) return -1;
  if (n_lanes == 0) return 1;
  if (n_lanes > INT64_MAX / (bound + 1)) return -1;
  const int bits = bits_for(static_cast<uint64_t>(n_lanes * (bound + 1) - 1));
  return bits > 0 ? bits : 1;
}

}  // namespace ingot::cuda
