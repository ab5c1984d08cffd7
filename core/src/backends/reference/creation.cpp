// Creation, copies and casts: ARANGE, FILL, COPY (same dtype, any strides, broadcasting the
// source), CAST (any dtype to any dtype, torch's conversion rules).
#include <cstring>
#include <vector>

#include "backends/reference/check.h"
#include "backends/reference/dtype_dispatch.h"
#include "backends/reference/kernels.h"
#include "backends/reference/strided_iter.h"

namespace ingot::reference {

namespace {

// Whether the address ranges that `a` and `b` span intersect (then a copy must be staged).
bool may_overlap(const ingot_tensor_desc& a, const ingot_tensor_desc& b) {
  if (sdk::numel(a) == 0 || sdk::numel(b) == 0) return false;
  const auto range = [](const ingot_tensor_desc& d, const char*& lo, const char*& hi) {
    int64_t first = 0, last = 0;
    for (int i = 0; i < d.ndim; ++i) (d.strides[i] < 0 ? first : last) += d.strides[i] * (d.shape[i] - 1);
    const int64_t size = sdk::dtype_size(d.dtype);
    lo = sdk::data_ptr<const char>(d) + first * size;
    hi = sdk::data_ptr<const char>(d) + (last + 1) * size;
  };
  const char *a_lo, *a_hi, *b_lo, *b_hi;
  range(a, a_lo, a_hi);
  range(b, b_lo, b_hi);
  return a_lo < b_hi && b_lo < a_hi;
}

}  // namespace

void copy_strided(const ingot_tensor_desc& dst, const ingot_tensor_desc& src, int32_t op) {
  if (dst.dtype != src.dtype)
    fail("{}: copy from {} into {}", op_name(op), sdk::dtype_label(src.dtype), sdk::dtype_label(dst.dtype));
  NdIter it(dst);
  const int o = it.add(dst.strides);
  const int i = it.add_broadcast(src, op);
  const int64_t size = sdk::dtype_size(dst.dtype);
  const auto bytes = static_cast<size_t>(size);
  char* out = sdk::data_ptr<char>(dst);
  const char* in = sdk::data_ptr<const char>(src);
  if (may_overlap(dst, src)) {  // e.g. x[1:] = x[:-1]: read everything before writing anything
    std::vector<char> staged(static_cast<size_t>(it.numel()) * bytes);
    char* next = staged.data();
    for (NdIter read = it; !read.done(); read.next(), next += bytes) std::memcpy(next, in + read[i] * size, bytes);
    next = staged.data();
    for (; !it.done(); it.next(), next += bytes) std::memcpy(out + it[o] * size, next, bytes);
    return;
  }
  for (; !it.done(); it.next()) std::memcpy(out + it[o] * size, in + it[i] * size, bytes);
}

void fill_strided(const ingot_tensor_desc& dst, double value) {
  void* base = sdk::data_ptr(dst);
  NdIter it(dst);
  const int o = it.add(dst.strides);
  for (; !it.done(); it.next()) store_as<double>(base, dst.dtype, it[o], value);
}

void run_arange(const sdk::OpCall& c) {
  expect_arity(c, 0, 1);
  const auto& a = sdk::attr<ingot_attr_arange>(c.attrs);
  const ingot_tensor_desc& out = c.out[0];
  void* base = sdk::data_ptr(out);
  NdIter it(out);
  const int o = it.add(out.strides);
  for (int64_t i = 0; !it.done(); it.next(), ++i) {
    store_as<double>(base, out.dtype, it[o], a.start + static_cast<double>(i) * a.step);
  }
}

void run_fill(const sdk::OpCall& c) {
  expect_arity(c, 0, 1);
  fill_strided(c.out[0], sdk::attr<ingot_attr_scalar>(c.attrs).value);
}

void run_copy(const sdk::OpCall& c) {
  expect_arity(c, 1, 1);
  copy_strided(c.out[0], c.in[0], c.op);
}

void run_cast(const sdk::OpCall& c) {
  expect_arity(c, 1, 1);
  const ingot_tensor_desc& src = c.in[0];
  const ingot_tensor_desc& dst = c.out[0];
  NdIter it(dst);
  const int o = it.add(dst.strides);
  const int i = it.add_broadcast(src, c.op);
  visit_any(c, src.dtype, [&](auto src_tag) {
    using S = typename decltype(src_tag)::type;
    const S* in = sdk::data_ptr<const S>(src);
    visit_any(c, dst.dtype, [&](auto dst_tag) {
      using D = typename decltype(dst_tag)::type;
      D* out = sdk::data_ptr<D>(dst);
      for (; !it.done(); it.next()) out[it[o]] = convert<D>(in[it[i]]);
    });
  });
}

}  // namespace ingot::reference
