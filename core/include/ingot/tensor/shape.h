// Shape: a small fixed-capacity list of dimensions (no heap allocation on the dispatch path).
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "ingot/plugin/ingot_plugin.h"

namespace ingot {

/// Up to INGOT_MAX_DIMS int64 values: used for sizes and for strides (in elements).
class Shape {
 public:
  static constexpr int kMaxDims = INGOT_MAX_DIMS;

  Shape() = default;
  Shape(std::initializer_list<int64_t> dims);
  explicit Shape(const std::vector<int64_t>& dims);
  Shape(const int64_t* dims, int n);

  int size() const { return n_; }
  bool empty() const { return n_ == 0; }
  int64_t operator[](int i) const { return d_[i]; }
  int64_t& operator[](int i) { return d_[i]; }
  const int64_t* data() const { return d_; }
  const int64_t* begin() const { return d_; }
  const int64_t* end() const { return d_ + n_; }
  int64_t back() const { return d_[n_ - 1]; }
  void push_back(int64_t v);
  void insert(int pos, int64_t v);
  void erase(int pos);
  void resize(int n, int64_t fill = 0);

  /// Product of the dims (1 for a scalar).
  int64_t numel() const;
  std::vector<int64_t> vec() const { return std::vector<int64_t>(d_, d_ + n_); }
  std::string str() const;  // "[2, 3]"

  friend bool operator==(const Shape& a, const Shape& b) {
    return a.n_ == b.n_ && std::equal(a.d_, a.d_ + a.n_, b.d_);
  }

 private:
  int64_t d_[kMaxDims] = {};
  int n_ = 0;
};

/// Row-major contiguous strides for a shape.
Shape contiguous_strides(const Shape& shape);
/// Bytes of a contiguous tensor of `shape` with `element_size`-byte elements, multiplied with an
/// overflow check: OutOfMemoryError when they pass 2^63 (a request no machine serves, usually a
/// size that overflowed), instead of a small number after wrapping around.
int64_t storage_bytes(const Shape& shape, int64_t element_size);
/// NumPy broadcasting of two shapes; throws ShapeError naming both.
Shape broadcast_shapes(const Shape& a, const Shape& b);
/// Wraps a possibly negative axis into [0, ndim); throws ShapeError when out of range.
int wrap_axis(int64_t axis, int ndim, const char* what);

}  // namespace ingot
