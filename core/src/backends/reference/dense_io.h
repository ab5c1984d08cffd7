// Dense double buffers for the float-only heavy kernels (matmul, conv, pooling, norms): read a
// strided tensor of any dtype into row-major f64, compute there, write back with one rounding.
#pragma once

#include <cstdint>
#include <vector>

#include "ingot/plugin/sdk.h"

namespace ingot::reference {

/// The elements of `d` in row-major order, converted to double.
std::vector<double> read_f64(const ingot_tensor_desc& d);
/// Writes row-major `values` (numel(d) of them) through `d`'s strides, converted to its dtype.
void write_f64(const ingot_tensor_desc& d, const std::vector<double>& values);
/// Row-major contiguous strides of `d`'s shape.
void dense_strides(const ingot_tensor_desc& d, int64_t* strides);

}  // namespace ingot::reference
