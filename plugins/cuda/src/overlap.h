// may_overlap: whether two strided views can share bytes, so that an element-wise copy between
// them must read everything before it writes anything (x[1:] = x[:-1]). Host-only and pure.
#pragma once

#include <cstdint>

#include "ingot/plugin/sdk.h"

namespace ingot::cuda {

/// The bytes [lo, hi) a view addresses: from its lowest element's first byte to its highest
/// element's last byte (gaps between elements included). Empty for a zero-size view.
struct ByteSpan {
  uintptr_t lo = 0;
  uintptr_t hi = 0;
};

inline ByteSpan byte_span(const ingot_tensor_desc& d) {
  if (sdk::numel(d) == 0) return {};
  int64_t first = 0, last = 0;  // element offsets of the lowest and the highest addressed element
  for (int i = 0; i < d.ndim; ++i) (d.strides[i] < 0 ? first : last) += d.strides[i] * (d.shape[i] - 1);
  const int64_t size = sdk::dtype_size(d.dtype);
  const auto base = reinterpret_cast<uintptr_t>(d.data) + static_cast<uintptr_t>(d.byte_offset);
  return {base + static_cast<uintptr_t>(first * size), base + static_cast<uintptr_t>((last + 1) * size)};
}

/// Conservative, like the reference backend: true when the two spans intersect, even if the
/// views interleave without sharing an element (a staged copy is then merely slower).
inline bool may_overlap(const ingot_tensor_desc& a, const ingot_tensor_desc& b) {
  const ByteSpan x = byte_span(a), y = byte_span(b);
  return x.lo < x.hi && y.lo < y.hi && x.lo < y.hi && y.lo < x.hi;
}

}  // namespace ingot::cuda
