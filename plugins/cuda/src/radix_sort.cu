// sort_pairs through cub::DeviceRadixSort with its double-buffer interface (scratch O(P), not O(n)).
#include <cub/device/device_radix_sort.cuh>

#include <string>

#include "radix_sort.h"

namespace ingot::cuda {
namespace {

void expect_ok(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  (void)cudaGetLastError();
  throw sdk::Failure(
      e == cudaErrorMemoryAllocation ? INGOT_ERR_OUT_OF_MEMORY : INGOT_ERR_RUNTIME,
      std::string("cuda: radix sort (") + what + ") failed: " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e));
}

template <class K>
void sort(SortBuffers<K>& b, int64_t n, int end_bit, const Launch& l) {
  if (n <= 0) return;
  cub::DoubleBuffer<K> keys(b.keys[b.current], b.keys[1 - b.current]);
  cub::DoubleBuffer<uint32_t> values(b.values[b.current], b.values[1 - b.current]);
  size_t bytes = 0;
  expect_ok(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys, values, n, 0, end_bit, l.stream), "workspace size");
  Scratch temp(*l.mem, bytes);
  expect_ok(cub::DeviceRadixSort::SortPairs(temp.get(), bytes, keys, values, n, 0, end_bit, l.stream), "launch");
  // CUB moves keys and values together, so both selectors agree.
  b.current = keys.Current() == b.keys[b.current] ? b.current : 1 - b.current;
}

}  // namespace

void sort_pairs(SortBuffers<uint32_t>& b, int64_t n, int end_bit, const Launch& l) { sort(b, n, end_bit, l); }
void sort_pairs(SortBuffers<uint64_t>& b, int64_t n, int end_bit, const Launch& l) { sort(b, n, end_bit, l); }

}  // namespace ingot::cuda
