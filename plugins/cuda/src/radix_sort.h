// Stable radix sort of (key, 32-bit value) pairs in scratch memory (CUB's DeviceRadixSort on the
// compute stream), shared by SORT, TOPK and SCATTER_ADD. Compiled once, in radix_sort.cu.
#pragma once

#include <cstdint>

#include "kernels.h"

namespace ingot::cuda {

/// Pairs in a double buffer: `keys[current]` and `values[current]` hold the data; the other halves
/// are scratch of the same size. Sorting flips `current` as CUB needs.
template <class K>
struct SortBuffers {
  K* keys[2];
  uint32_t* values[2];
  int current;
};

/// Sorts `n` pairs ascending by bits [0, end_bit) of the key; equal keys keep their input order.
void sort_pairs(SortBuffers<uint32_t>& b, int64_t n, int end_bit, const Launch& l);
void sort_pairs(SortBuffers<uint64_t>& b, int64_t n, int end_bit, const Launch& l);

}  // namespace ingot::cuda
