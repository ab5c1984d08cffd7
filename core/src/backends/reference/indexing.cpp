// Shape and indexing ops: CONCAT along an axis, constant PAD (negative pads crop), and torch's
// GATHER, INDEX_SELECT and SCATTER_ADD along an axis with i64 (or i32) indices.
#include <algorithm>
#include <cstring>

#include "backends/reference/check.h"
#include "backends/reference/dtype_dispatch.h"
#include "backends/reference/kernels.h"
#include "backends/reference/strided_iter.h"

namespace ingot::reference {

namespace {

int64_t load_index(const sdk::OpCall& c, const ingot_tensor_desc& index, int64_t off, int64_t bound) {
  const int64_t i = load_as<int64_t>(sdk::data_ptr(index), index.dtype, off);
  if (i < 0 || i >= bound) fail("{}: index {} is out of range for a dim of size {}", op_name(c.op), i, bound);
  return i;
}

void expect_index_dtype(const sdk::OpCall& c, const ingot_tensor_desc& index) {
  if (index.dtype != INGOT_I64 && index.dtype != INGOT_I32) {
    fail("{}: index is {}, expected int64", op_name(c.op), sdk::dtype_label(index.dtype));
  }
}

}  // namespace

void run_concat(const sdk::OpCall& c) {
  expect_arity(c, -1, 1);
  const ingot_tensor_desc& out = c.out[0];
  const int axis = wrap_axis(c, sdk::attr<ingot_attr_axis>(c.attrs).axis, out.ndim);
  if (out.ndim == 0) fail("concat: cannot concatenate into a 0-dim output");
  int64_t start = 0;
  for (int k = 0; k < c.n_in; ++k) {
    const ingot_tensor_desc& in = c.in[k];
    if (in.ndim == 1 && in.shape[0] == 0 && out.ndim != 1) continue;  // torch skips legacy empty [0] inputs
    bool fits = in.ndim == out.ndim && in.dtype == out.dtype;
    for (int d = 0; fits && d < in.ndim; ++d) fits = d == axis || in.shape[d] == out.shape[d];
    if (!fits || start + in.shape[axis] > out.shape[axis]) {
      fail("concat: input {} {} ({}) does not fit output {} ({}) along axis {}", k, shape_str(in),
           sdk::dtype_label(in.dtype), shape_str(out), sdk::dtype_label(out.dtype), axis);
    }
    copy_strided(narrow(out, axis, start, in.shape[axis]), in, c.op);
    start += in.shape[axis];
  }
  if (start != out.shape[axis])
    fail("concat: inputs cover {} of the output's {} along axis {}", start, out.shape[axis], axis);
}

void run_pad(const sdk::OpCall& c) {
  expect_arity(c, 1, 1);
  const auto& a = sdk::attr<ingot_attr_pad>(c.attrs);
  const ingot_tensor_desc& in = c.in[0];
  const ingot_tensor_desc& out = c.out[0];
  expect_dtype(c, out, in.dtype, "output");
  bool fits = in.ndim == out.ndim;
  for (int d = 0; fits && d < in.ndim; ++d) fits = out.shape[d] == in.shape[d] + a.pads[2 * d] + a.pads[2 * d + 1];
  if (!fits) fail("pad: input {} with the given pads does not give output {}", shape_str(in), shape_str(out));
  fill_strided(out, a.value);
  // Copy the part of the input that survives cropping into its place in the output.
  ingot_tensor_desc src = in, dst = out;
  for (int d = 0; d < in.ndim; ++d) {
    const int64_t before = a.pads[2 * d];
    const int64_t src_start = before < 0 ? -before : 0;
    const int64_t dst_start = before > 0 ? before : 0;
    const int64_t length = std::min(in.shape[d] - src_start, out.shape[d] - dst_start);
    if (length <= 0) return;  // nothing of the input survives
    src = narrow(src, d, src_start, length);
    dst = narrow(dst, d, dst_start, length);
  }
  copy_strided(dst, src, c.op);
}

void run_gather(const sdk::OpCall& c) {
  expect_arity(c, 2, 1);
  const ingot_tensor_desc& self = c.in[0];
  const ingot_tensor_desc& index = c.in[1];
  const ingot_tensor_desc& out = c.out[0];
  expect_index_dtype(c, index);
  expect_dtype(c, out, self.dtype, "output");
  expect_same_shape(c, index, out, "index", "output");
  const int axis = wrap_axis(c, sdk::attr<ingot_attr_axis>(c.attrs).axis, self.ndim);
  bool fits = index.ndim == self.ndim || (self.ndim <= 1 && index.ndim <= 1);
  for (int d = 0; fits && d < index.ndim; ++d) fits = d == axis || index.shape[d] <= self.shape[d];
  if (!fits) fail("gather: index {} does not fit self {} along axis {}", shape_str(index), shape_str(self), axis);
  const int64_t size = sdk::dtype_size(self.dtype);
  const char* src = sdk::data_ptr<const char>(self);
  char* dst = sdk::data_ptr<char>(out);
  for (NdIter it(out); !it.done(); it.next()) {
    const int64_t* idx = it.index();
    int64_t src_off = 0;
    for (int d = 0; d < self.ndim; ++d) src_off += (d == axis ? 0 : idx[d]) * self.strides[d];
    const int64_t i = load_index(c, index, offset_of(index, idx), lane_size(self, axis));
    src_off += i * lane_stride(self, axis);
    std::memcpy(dst + offset_of(out, idx) * size, src + src_off * size, static_cast<size_t>(size));
  }
}

void run_index_select(const sdk::OpCall& c) {
  expect_arity(c, 2, 1);
  const ingot_tensor_desc& self = c.in[0];
  const ingot_tensor_desc& index = c.in[1];
  const ingot_tensor_desc& out = c.out[0];
  expect_index_dtype(c, index);
  expect_dtype(c, out, self.dtype, "output");
  const int axis = wrap_axis(c, sdk::attr<ingot_attr_axis>(c.attrs).axis, self.ndim);
  const int64_t n_index = sdk::numel(index);
  bool fits = index.ndim <= 1 && out.ndim == self.ndim;
  for (int d = 0; fits && d < out.ndim; ++d) fits = out.shape[d] == (d == axis ? n_index : self.shape[d]);
  if (!fits)
    fail("index_select: self {} with index {} along axis {} does not give output {}", shape_str(self), shape_str(index),
         axis, shape_str(out));
  const int64_t index_stride = index.ndim == 1 ? index.strides[0] : 0;
  for (int64_t j = 0; j < n_index; ++j) {
    const int64_t i = load_index(c, index, j * index_stride, lane_size(self, axis));
    copy_strided(self.ndim > 0 ? narrow(out, axis, j, 1) : out, self.ndim > 0 ? narrow(self, axis, i, 1) : self, c.op);
  }
}

void run_scatter_add(const sdk::OpCall& c) {
  expect_arity(c, 3, 1);
  const ingot_tensor_desc& self = c.in[0];
  const ingot_tensor_desc& index = c.in[1];
  const ingot_tensor_desc& src = c.in[2];
  const ingot_tensor_desc& out = c.out[0];
  expect_index_dtype(c, index);
  expect_dtype(c, src, self.dtype, "src");
  expect_dtype(c, out, self.dtype, "output");
  expect_same_shape(c, self, out, "self", "output");
  const int axis = wrap_axis(c, sdk::attr<ingot_attr_axis>(c.attrs).axis, self.ndim);
  bool fits = index.ndim == self.ndim && src.ndim == self.ndim;
  for (int d = 0; fits && d < index.ndim; ++d) {
    fits = index.shape[d] <= src.shape[d] && (d == axis || index.shape[d] <= self.shape[d]);
  }
  if (!fits)
    fail("scatter_add: index {} does not fit self {} and src {} along axis {}", shape_str(index), shape_str(self),
         shape_str(src), axis);
  copy_strided(out, self, c.op);
  visit_num(c, self.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = Compute<T>;
    const T* s = sdk::data_ptr<const T>(src);
    T* o = sdk::data_ptr<T>(out);
    for (NdIter it(index); !it.done(); it.next()) {
      const int64_t* idx = it.index();
      int64_t out_off = 0;
      for (int d = 0; d < out.ndim; ++d) out_off += (d == axis ? 0 : idx[d]) * out.strides[d];
      out_off += load_index(c, index, offset_of(index, idx), lane_size(self, axis)) * lane_stride(out, axis);
      o[out_off] = convert<T>(add_wrapping(convert<C>(o[out_off]), convert<C>(s[offset_of(src, idx)])));
    }
  });
}

}  // namespace ingot::reference
