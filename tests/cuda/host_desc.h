// ABI tensor descriptors for the cuda plugin's host-side tests (supports(), overlap and index
// checks without a GPU): shapes over a static buffer that no test reads.
#pragma once

#include <cstdint>
#include <initializer_list>

#include "ingot/plugin/sdk.h"

namespace ingot::cuda::test {

/// A strided descriptor on `device` (row-major strides unless `strides` is given) `offset`
/// elements into a 4 KiB static buffer; nbytes is left 0.
inline ingot_tensor_desc host_desc(std::initializer_list<int64_t> shape, int32_t dtype,
                                   std::initializer_list<int64_t> strides = {}, int64_t offset = 0,
                                   int32_t device = INGOT_DEVICE_CUDA) {
  alignas(16) static char storage[1 << 12];
  ingot_tensor_desc d{};
  d.struct_size = sizeof(d);
  d.abi_minor = INGOT_ABI_MINOR;
  d.dtype = dtype;
  d.ndim = static_cast<int32_t>(shape.size());
  int i = 0;
  for (int64_t s : shape) d.shape[i++] = s;
  int64_t stride = 1;
  for (int k = d.ndim - 1; k >= 0; --k) d.strides[k] = stride, stride *= d.shape[k];
  i = 0;
  for (int64_t s : strides) d.strides[i++] = s;
  d.byte_offset = offset * sdk::dtype_size(dtype);
  d.device_kind = device;
  d.data = storage;
  d.layout = INGOT_LAYOUT_STRIDED;
  return d;
}

}  // namespace ingot::cuda::test
