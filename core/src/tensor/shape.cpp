// Shape: fixed-capacity dims, strides and broadcasting.
#include "ingot/tensor/shape.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ingot/base/error.h"

namespace ingot {

Shape::Shape(std::initializer_list<int64_t> dims) : Shape(dims.begin(), static_cast<int>(dims.size())) {}
Shape::Shape(const std::vector<int64_t>& dims) : Shape(dims.data(), static_cast<int>(dims.size())) {}
Shape::Shape(const int64_t* dims, int n) {
  INGOT_CHECK_SHAPE(n >= 0 && n <= kMaxDims, "a tensor has at most {} dims, got {}", kMaxDims, n);
  n_ = n;
  std::copy(dims, dims + n, d_);
}

void Shape::push_back(int64_t v) {
  INGOT_CHECK_SHAPE(n_ < kMaxDims, "a tensor has at most {} dims", kMaxDims);
  d_[n_++] = v;
}
void Shape::insert(int pos, int64_t v) {
  INGOT_CHECK_SHAPE(n_ < kMaxDims, "a tensor has at most {} dims", kMaxDims);
  for (int i = n_; i > pos; --i) d_[i] = d_[i - 1];
  d_[pos] = v;
  ++n_;
}
void Shape::erase(int pos) {
  for (int i = pos; i + 1 < n_; ++i) d_[i] = d_[i + 1];
  --n_;
}
void Shape::resize(int n, int64_t fill) {
  INGOT_CHECK_SHAPE(n >= 0 && n <= kMaxDims, "a tensor has at most {} dims, got {}", kMaxDims, n);
  for (int i = n_; i < n; ++i) d_[i] = fill;
  n_ = n;
}

int64_t Shape::numel() const {
  int64_t n = 1;
  for (int i = 0; i < n_; ++i) n *= d_[i];
  return n;
}

std::string Shape::str() const { return fmt::format("[{}]", fmt::join(begin(), end(), ", ")); }

int64_t storage_bytes(const Shape& shape, int64_t element_size) {
  int64_t bytes = element_size;
  bool overflow = false;
  for (int64_t d : shape) {
    if (d == 0) return 0;  // (an empty tensor holds nothing whatever its other dims)
    overflow = __builtin_mul_overflow(bytes, d, &bytes) || overflow;
  }
  if (overflow)
    throw OutOfMemoryError(
        fmt::format("a tensor of shape {} would need more than 2^63 bytes: check the shape for an "
                    "overflowed size",
                    shape.str()));
  return bytes;
}

Shape contiguous_strides(const Shape& shape) {
  Shape s;
  s.resize(shape.size());
  int64_t acc = 1;
  for (int i = shape.size() - 1; i >= 0; --i) {
    s[i] = acc;
    acc *= std::max<int64_t>(shape[i], 1);
  }
  return s;
}

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  const int n = std::max(a.size(), b.size());
  Shape out;
  out.resize(n);
  for (int i = 0; i < n; ++i) {
    const int ia = a.size() - n + i, ib = b.size() - n + i;
    const int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
    INGOT_CHECK_SHAPE(da == db || da == 1 || db == 1,
                      "shapes {} and {} cannot be broadcast: dim {} is {} vs {}", a.str(), b.str(), i, da, db);
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int wrap_axis(int64_t axis, int ndim, const char* what) {
  const int64_t lo = ndim == 0 ? -1 : -ndim, hi = ndim == 0 ? 0 : ndim - 1;
  INGOT_CHECK_SHAPE(axis >= lo && axis <= hi, "{}: axis {} out of range for a tensor of {} dims", what, axis, ndim);
  return static_cast<int>(axis < 0 ? axis + std::max(ndim, 1) : axis);
}

}  // namespace ingot
