// Tensor creation: constant fills and ranges (casts and copies are Tensor::to / copy_).
#pragma once

#include <optional>

#include "ingot/tensor/tensor.h"

namespace ingot {

Tensor full(const Shape& shape, double value, DType dtype = DType::F32, Device device = Device::cpu());
Tensor zeros(const Shape& shape, DType dtype = DType::F32, Device device = Device::cpu());
Tensor ones(const Shape& shape, DType dtype = DType::F32, Device device = Device::cpu());
/// Same shape, dtype and device as `x`.
Tensor full_like(const Tensor& x, double value);
Tensor zeros_like(const Tensor& x);
Tensor ones_like(const Tensor& x);
/// start, start + step, ... below `end` (above it for a negative step). Without a dtype: int64
/// when start, end and step are all whole numbers (like torch.arange(5)), else float32.
Tensor arange(double start, double end, double step = 1.0, std::optional<DType> dtype = std::nullopt,
              Device device = Device::cpu());
/// arange(0, end).
Tensor arange(double end, std::optional<DType> dtype = std::nullopt, Device device = Device::cpu());

}  // namespace ingot
