// Helpers shared by the reference backend's tests: run an op on the reference backend, build
// small tensors, compare values with a stated tolerance (NaN matches NaN).
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "ingot/runtime/dispatch.h"
#include "ingot/runtime/op_info.h"
#include "ingot/runtime/registry.h"
#include "ingot/tensor/tensor.h"

namespace ingot::test::ref {

inline const Backend& reference() { return BackendRegistry::instance().reference(); }

/// Runs `op` on the reference backend into existing outputs.
inline void run(OpKind op, const std::vector<Tensor>& in, const std::vector<Tensor>& out, const void* attrs = nullptr) {
  run_op_on(reference(), op, in, out, attrs);
}

inline Tensor f32(const std::vector<float>& values, const Shape& shape) { return Tensor::from_vector(values, shape); }
inline Tensor f64(const std::vector<double>& values, const Shape& shape) { return Tensor::from_vector(values, shape); }
inline Tensor zeros(const Shape& shape, DType dtype = DType::F32) {
  Tensor t = Tensor::empty(shape, dtype);
  t.fill_(0.0);
  return t;
}

inline Tensor unary(OpKind op, const Tensor& x, const void* attrs = nullptr) {
  Tensor y = Tensor::empty(x.shape(), x.dtype());
  run(op, {x}, {y}, attrs);
  return y;
}
inline Tensor binary(OpKind op, const Tensor& a, const Tensor& b, const Shape& shape) {
  Tensor y = Tensor::empty(shape, a.dtype());
  run(op, {a, b}, {y});
  return y;
}
inline Tensor reduce(OpKind op, const Tensor& x, const Shape& shape) {
  Tensor y = Tensor::empty(shape, x.dtype());
  run(op, {x}, {y});
  return y;
}

/// Checks every value (row-major) within tol * (1 + |expected|); NaN must meet NaN.
inline void check_values(const Tensor& t, const std::vector<double>& expected, double tol) {
  const std::vector<double> got = t.to_vector<double>();
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", expected " << expected[i]);
    if (std::isnan(expected[i])) {
      CHECK(std::isnan(got[i]));
    } else {
      CHECK(std::fabs(got[i] - expected[i]) <= tol * (1.0 + std::fabs(expected[i])));
    }
  }
}

/// The reference table's supports() for raw descriptors.
inline bool supports(OpKind op, const std::vector<ingot_tensor_desc>& in, const std::vector<ingot_tensor_desc>& out,
                     const void* attrs = nullptr) {
  const ingot_compute_table* t = reference().compute_table();
  return t->supports(t->self, op, in.data(), static_cast<int32_t>(in.size()), out.data(),
                     static_cast<int32_t>(out.size()), attrs) != 0;
}

/// Sum over all elements of a * b, in double (for adjoint checks of backward ops).
inline double dot(const Tensor& a, const Tensor& b) {
  const std::vector<double> x = a.to_vector<double>(), y = b.to_vector<double>();
  REQUIRE(x.size() == y.size());
  double s = 0;
  for (size_t i = 0; i < x.size(); ++i) s += x[i] * y[i];
  return s;
}

}  // namespace ingot::test::ref
