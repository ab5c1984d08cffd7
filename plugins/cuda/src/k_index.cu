// CONCAT, constant PAD (negative pads crop), and torch's GATHER, INDEX_SELECT and SCATTER_ADD
// along an axis with i64 / i32 indices. Concat and pad reuse the creation family's FILL / COPY on
// narrowed views; gather-like ops copy elements by size; SCATTER_ADD is a deterministic gather
// (each output element adds its sources in index order, rounding each step like the reference).
// Out-of-range indices are skipped (gather writes 0): there is no device-side error channel yet.
#include "k_common.cuh"

namespace ingot::cuda {
namespace {

int wrap(int axis, int ndim) { return axis < 0 ? axis + ndim : axis; }

// `d` restricted to [start, start + length) along `dim`.
ingot_tensor_desc narrow(ingot_tensor_desc d, int dim, int64_t start, int64_t length) {
  d.byte_offset += start * d.strides[dim] * sdk::dtype_size(d.dtype);
  d.shape[dim] = length;
  return d;
}

template <class E>  // E: an unsigned type of the element's size
__global__ void gather_kernel(E* out, const E* self, const void* index, int32_t index_dt, Indexer<3> ix, int64_t n,
                              int64_t axis_stride, int64_t bound) {
  int64_t off[3];
  INGOT_GRID_STRIDE(k, n) {
    ix.offsets(k, off);  // out, index, self without the axis
    const int64_t i = load_as<int64_t>(index, index_dt, off[1]);
    out[off[0]] = (i >= 0 && i < bound) ? self[off[2] + i * axis_stride] : E(0);
  }
}

template <class T>
__global__ void scatter_add_kernel(T* out, const T* self, const T* src, const void* index, int32_t index_dt,
                                   Indexer<2> ix, int64_t n, Indexer<2> lanes, int64_t lane_len, int64_t idx_axis_stride,
                                   int64_t src_axis_stride, int axis) {
  using C = compute_t<T>;
  int64_t off[2];
  INGOT_GRID_STRIDE(k, n) {
    ix.offsets(k, off);  // out, self
    T acc = self[off[1]];
    // This element's coordinate j along the axis; its index / src lane from the other coordinates.
    int64_t rem = k, j = 0, lo_index = 0, lo_src = 0;
    bool inside = true;
    for (int d = ix.ndim - 1; d >= 0; --d) {
      const int64_t c = rem % ix.shape[d];
      rem /= ix.shape[d];
      if (d == axis) {
        j = c;
      } else {
        inside = inside && c < lanes.shape[d];
        lo_index += c * lanes.strides[0][d];
        lo_src += c * lanes.strides[1][d];
      }
    }
    if (inside) {
      for (int64_t i = 0; i < lane_len; ++i)
        if (load_as<int64_t>(index, index_dt, lo_index + i * idx_axis_stride) == j)
          acc = cvt<T>(cvt<C>(acc) + cvt<C>(src[lo_src + i * src_axis_stride]));
    }
    out[off[0]] = acc;
  }
}

template <class Fn>
void visit_size(int32_t dtype, Fn&& fn) {
  switch (sdk::dtype_size(dtype)) {
    case 8: return fn(uint64_t{});
    case 4: return fn(uint32_t{});
    case 2: return fn(uint16_t{});
    default: return fn(uint8_t{});
  }
}

bool is_index(const ingot_tensor_desc& d) { return d.dtype == INGOT_I64 || d.dtype == INGOT_I32; }

}  // namespace

bool index_supports(const sdk::OpCall& c) {
  if (!all_device_strided(c) || c.n_out != 1 || c.attrs == nullptr) return false;
  const ingot_tensor_desc& out = c.out[0];
  switch (c.op) {
    case INGOT_OP_CONCAT: {
      if (out.ndim == 0 || c.n_in < 1) return false;
      const int axis = wrap(sdk::attr<ingot_attr_axis>(c.attrs).axis, out.ndim);
      if (axis < 0 || axis >= out.ndim) return false;
      int64_t covered = 0;
      for (int k = 0; k < c.n_in; ++k) {
        const ingot_tensor_desc& in = c.in[k];
        if (in.ndim == 1 && in.shape[0] == 0 && out.ndim != 1) continue;
        if (in.ndim != out.ndim || in.dtype != out.dtype) return false;
        for (int d = 0; d < out.ndim; ++d)
          if (d != axis && in.shape[d] != out.shape[d]) return false;
        covered += in.shape[axis];
      }
      return covered == out.shape[axis];
    }
    case INGOT_OP_PAD: {
      const auto& a = sdk::attr<ingot_attr_pad>(c.attrs);
      if (c.n_in != 1 || c.in[0].ndim != out.ndim || c.in[0].dtype != out.dtype) return false;
      for (int d = 0; d < out.ndim; ++d)
        if (out.shape[d] != c.in[0].shape[d] + a.pads[2 * d] + a.pads[2 * d + 1]) return false;
      return true;
    }
    case INGOT_OP_GATHER: {
      if (c.n_in != 2 || !is_index(c.in[1]) || c.in[0].dtype != out.dtype) return false;
      const ingot_tensor_desc &self = c.in[0], &index = c.in[1];
      if (index.ndim != out.ndim || index.ndim != self.ndim || self.ndim == 0) return false;
      const int axis = wrap(sdk::attr<ingot_attr_axis>(c.attrs).axis, self.ndim);
      if (axis < 0 || axis >= self.ndim) return false;
      for (int d = 0; d < index.ndim; ++d)
        if (index.shape[d] != out.shape[d] || (d != axis && index.shape[d] > self.shape[d])) return false;
      return true;
    }
    case INGOT_OP_INDEX_SELECT: {
      if (c.n_in != 2 || !is_index(c.in[1]) || c.in[0].dtype != out.dtype || c.in[1].ndim > 1) return false;
      const ingot_tensor_desc& self = c.in[0];
      if (self.ndim == 0 || out.ndim != self.ndim) return false;
      const int axis = wrap(sdk::attr<ingot_attr_axis>(c.attrs).axis, self.ndim);
      if (axis < 0 || axis >= self.ndim) return false;
      for (int d = 0; d < out.ndim; ++d)
        if (out.shape[d] != (d == axis ? sdk::numel(c.in[1]) : self.shape[d])) return false;
      return true;
    }
    case INGOT_OP_SCATTER_ADD: {
      if (c.n_in != 3 || !is_index(c.in[1]) || !has_dtype(INGOT_DTYPES_NUM, out.dtype)) return false;
      const ingot_tensor_desc &self = c.in[0], &index = c.in[1], &src = c.in[2];
      if (self.dtype != out.dtype || src.dtype != out.dtype || self.ndim == 0) return false;
      if (index.ndim != self.ndim || src.ndim != self.ndim || out.ndim != self.ndim) return false;
      const int axis = wrap(sdk::attr<ingot_attr_axis>(c.attrs).axis, self.ndim);
      if (axis < 0 || axis >= self.ndim) return false;
      for (int d = 0; d < self.ndim; ++d)
        if (out.shape[d] != self.shape[d] || index.shape[d] > src.shape[d] || (d != axis && index.shape[d] > self.shape[d]))
          return false;
      return true;
    }
    default: return false;
  }
}

void index_run(const sdk::OpCall& c, const Launch& l) {
  const ingot_tensor_desc& out = c.out[0];
  const int64_t n = sdk::numel(out);
  if (c.op == INGOT_OP_CONCAT) {
    const int axis = wrap(sdk::attr<ingot_attr_axis>(c.attrs).axis, out.ndim);
    int64_t start = 0;
    for (int k = 0; k < c.n_in; ++k) {
      const ingot_tensor_desc& in = c.in[k];
      if (in.ndim == 1 && in.shape[0] == 0 && out.ndim != 1) continue;
      const ingot_tensor_desc dst = narrow(out, axis, start, in.shape[axis]);
      start += in.shape[axis];
      creation_run(sdk::OpCall{INGOT_OP_COPY, &in, 1, &dst, 1, nullptr}, l);
    }
    return;
  }
  if (c.op == INGOT_OP_PAD) {
    const auto& a = sdk::attr<ingot_attr_pad>(c.attrs);
    const ingot_attr_scalar fill{sizeof(ingot_attr_scalar), INGOT_ABI_MINOR, a.value};
    creation_run(sdk::OpCall{INGOT_OP_FILL, nullptr, 0, &out, 1, &fill}, l);
    ingot_tensor_desc src = c.in[0], dst = out;
    for (int d = 0; d < src.ndim; ++d) {
      const int64_t before = a.pads[2 * d];
      const int64_t src_start = before < 0 ? -before : 0, dst_start = before > 0 ? before : 0;
      const int64_t length = std::min(c.in[0].shape[d] - src_start, out.shape[d] - dst_start);
      if (length <= 0) return;
      src = narrow(src, d, src_start, length);
      dst = narrow(dst, d, dst_start, length);
    }
    return creation_run(sdk::OpCall{INGOT_OP_COPY, &src, 1, &dst, 1, nullptr}, l);
  }
  if (n == 0) return;
  const ingot_tensor_desc &self = c.in[0], &index = c.in[1];
  const int axis = wrap(sdk::attr<ingot_attr_axis>(c.attrs).axis, self.ndim);
  const unsigned grid = grid_for(n, l);
  if (c.op == INGOT_OP_GATHER || c.op == INGOT_OP_INDEX_SELECT) {
    Indexer<3> ix{};
    ix.ndim = out.ndim;
    for (int d = 0; d < out.ndim; ++d) {
      ix.shape[d] = out.shape[d];
      ix.strides[0][d] = out.strides[d];
      ix.strides[1][d] = c.op == INGOT_OP_GATHER ? index.strides[d] : (d == axis && index.ndim == 1 ? index.strides[0] : 0);
      ix.strides[2][d] = d == axis ? 0 : self.strides[d];
    }
    visit_size(out.dtype, [&](auto tag) {
      using E = decltype(tag);
      gather_kernel<E><<<grid, kThreads, 0, l.stream>>>(sdk::data_ptr<E>(out), sdk::data_ptr<const E>(self),
                                                        sdk::data_ptr<const void>(index), index.dtype, ix, n,
                                                        self.strides[axis], self.shape[axis]);
    });
    return check_launch("gather");
  }
  const ingot_tensor_desc& src = c.in[2];
  const ingot_tensor_desc* ins[] = {&self};
  const Indexer<2> ix = make_indexer<2>(out, ins);
  Indexer<2> lanes{};
  lanes.ndim = index.ndim;
  for (int d = 0; d < index.ndim; ++d) {
    lanes.shape[d] = d == axis ? 1 : index.shape[d];
    lanes.strides[0][d] = index.strides[d];
    lanes.strides[1][d] = src.strides[d];
  }
  visit_dtype(out.dtype, "scatter_add", [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      scatter_add_kernel<T><<<grid, kThreads, 0, l.stream>>>(
          sdk::data_ptr<T>(out), sdk::data_ptr<const T>(self), sdk::data_ptr<const T>(src),
          sdk::data_ptr<const void>(index), index.dtype, ix, n, lanes, index.shape[axis], index.strides[axis],
          src.strides[axis], axis);
    }
  });
  check_launch("scatter_add");
}

}  // namespace ingot::cuda
