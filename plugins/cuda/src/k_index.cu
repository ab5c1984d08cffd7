// CONCAT, constant PAD (negative pads crop), and torch's GATHER, INDEX_SELECT and SCATTER_ADD
// along an axis with i64 / i32 indices. Concat and pad reuse the creation family's FILL / COPY on
// narrowed views; gather-like ops copy elements by size. An index out of range is reported to the
// device's error record (raised at the next synchronization, like the reference's error) and reads
// as 0 / adds nothing. SCATTER_ADD is deterministic and bit-identical to the reference: a stable
// radix sort groups the index's elements by (lane, target), then each target adds its sources in
// index order, rounding each step like the reference; O(index size) work, no atomics.
#include <algorithm>

#include "k_common.cuh"
#include "radix_sort.h"
#include "sort_plan.h"

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
                              int64_t axis_stride, int64_t bound, DeviceErrorRecord* err, int32_t op) {
  int64_t off[3];
  INGOT_GRID_STRIDE(k, n) {
    ix.offsets(k, off);  // out, index, self without the axis
    const int64_t i = load_as<int64_t>(index, index_dt, off[1]);
    if (i >= 0 && i < bound) {
      out[off[0]] = self[off[2] + i * axis_stride];
    } else {
      out[off[0]] = E(0);
      report_index_error(err, op, i, bound);
    }
  }
}

// SCATTER_ADD, step 1. Element q of the index (row-major) gets the key lane * (bound + 1) + j,
// where lane numbers its coordinates off the axis and j is its value (bound when out of range).
// Operands of ix: the index, the lane number (contiguous strides, 0 on the axis).
template <class K>
__global__ void scatter_keys_kernel(const void* index, int32_t index_dt, Indexer<2> ix, int64_t n, int64_t bound,
                                    K* keys, uint32_t* values, DeviceErrorRecord* err) {
  int64_t off[2];
  INGOT_GRID_STRIDE(q, n) {
    ix.offsets(q, off);
    int64_t j = load_as<int64_t>(index, index_dt, off[0]);
    if (j < 0 || j >= bound) {
      report_index_error(err, INGOT_OP_SCATTER_ADD, j, bound);
      j = bound;
    }
    keys[q] =
        static_cast<K>(static_cast<uint64_t>(off[1]) * static_cast<uint64_t>(bound + 1) + static_cast<uint64_t>(j));
    values[q] = static_cast<uint32_t>(q);
  }
}

// a + b as the reference adds: integers wrap (through unsigned, no signed overflow).
template <class C>
__device__ __forceinline__ C add_wrapping(C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    using U = std::make_unsigned_t<C>;
    return static_cast<C>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}

// SCATTER_ADD, step 2, over the sorted pairs: the first pair of each run of equal keys adds the
// run's sources (in index order: the sort is stable) to its target. Operands of ix (over the
// index's shape): src, and out without the axis.
template <class T, class K>
__global__ void scatter_sum_kernel(T* out, const T* src, const K* keys, const uint32_t* order, int64_t n, Indexer<2> ix,
                                   int64_t bound, int64_t out_axis_stride) {
  using C = compute_t<T>;
  int64_t off[2];
  INGOT_GRID_STRIDE(s, n) {
    const K key = keys[s];
    if (s > 0 && keys[s - 1] == key) continue;
    const int64_t j = static_cast<int64_t>(static_cast<uint64_t>(key) % static_cast<uint64_t>(bound + 1));
    if (j == bound) continue;  // out of range: reported in step 1
    ix.offsets(order[s], off);
    T* target = out + off[1] + j * out_axis_stride;
    T acc = *target;
    for (int64_t r = s; r < n && keys[r] == key; ++r) {
      if (r > s) ix.offsets(order[r], off);
      acc = cvt<T>(add_wrapping(cvt<C>(acc), cvt<C>(src[off[0]])));
    }
    *target = acc;
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

// The index's lanes: its elements with the same coordinates off the axis.
int64_t lane_count(const ingot_tensor_desc& index, int axis) {
  int64_t n = 1;
  for (int d = 0; d < index.ndim; ++d)
    if (d != axis) n *= index.shape[d];
  return n;
}

template <class K>
void scatter_add_sorted(const sdk::OpCall& c, int axis, int key_bits, const Launch& l) {
  const ingot_tensor_desc &out = c.out[0], &index = c.in[1], &src = c.in[2];
  const int64_t n = sdk::numel(index), bound = out.shape[axis];
  Indexer<2> keys_ix{};  // over the index: its strides, and the lane number's
  Indexer<2> sum_ix{};   // over the index: src's strides, and out's without the axis
  keys_ix.ndim = sum_ix.ndim = index.ndim;
  int64_t lane_stride = 1;
  for (int d = index.ndim - 1; d >= 0; --d) {
    keys_ix.shape[d] = sum_ix.shape[d] = index.shape[d];
    keys_ix.strides[0][d] = index.strides[d];
    keys_ix.strides[1][d] = d == axis ? 0 : lane_stride;
    if (d != axis) lane_stride *= index.shape[d];
    sum_ix.strides[0][d] = src.strides[d];
    sum_ix.strides[1][d] = d == axis ? 0 : out.strides[d];
  }
  Scratch key_mem(*l.mem, 2 * static_cast<size_t>(n) * sizeof(K));
  Scratch value_mem(*l.mem, 2 * static_cast<size_t>(n) * sizeof(uint32_t));
  SortBuffers<K> b{{key_mem.as<K>(), key_mem.as<K>() + n}, {value_mem.as<uint32_t>(), value_mem.as<uint32_t>() + n}, 0};
  const unsigned grid = grid_for(n, l);
  scatter_keys_kernel<K><<<grid, kThreads, 0, l.stream>>>(sdk::data_ptr<const void>(index), index.dtype, keys_ix, n,
                                                          bound, b.keys[0], b.values[0], l.error_record());
  check_launch("scatter_add (keys)");
  l.watch_errors();
  sort_pairs(b, n, key_bits, l);
  visit_dtype(out.dtype, "scatter_add", [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      scatter_sum_kernel<T, K><<<grid, kThreads, 0, l.stream>>>(sdk::data_ptr<T>(out), sdk::data_ptr<const T>(src),
                                                                b.keys[b.current], b.values[b.current], n, sum_ix,
                                                                bound, out.strides[axis]);
    }
  });
  check_launch("scatter_add (sum)");
}

}  // namespace

bool index_supports(const sdk::OpCall& c) {
  if (!all_device_strided(c) || c.n_out != 1) return false;
  if (c.op == INGOT_OP_PAD ? !has_attr<ingot_attr_pad>(c.attrs) : !has_attr<ingot_attr_axis>(c.attrs)) return false;
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
      return scatter_add_key_bits(lane_count(index, axis), self.shape[axis], sdk::numel(index)) > 0;
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
  const ingot_tensor_desc &self = c.in[0], &index = c.in[1];
  const int axis = wrap(sdk::attr<ingot_attr_axis>(c.attrs).axis, self.ndim);
  if (c.op == INGOT_OP_GATHER || c.op == INGOT_OP_INDEX_SELECT) {
    if (n == 0) return;
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
      gather_kernel<E><<<grid_for(n, l), kThreads, 0, l.stream>>>(
          sdk::data_ptr<E>(out), sdk::data_ptr<const E>(self), sdk::data_ptr<const void>(index), index.dtype, ix, n,
          self.strides[axis], self.shape[axis], l.error_record(), c.op);
    });
    check_launch(op_name(c.op));
    return l.watch_errors();
  }
  // SCATTER_ADD: out = self (unless it is self), then the sorted sum.
  const bool in_place = out.data == self.data && out.byte_offset == self.byte_offset &&
                        std::equal(out.strides, out.strides + out.ndim, self.strides);
  if (!in_place) creation_run(sdk::OpCall{INGOT_OP_COPY, &self, 1, &out, 1, nullptr}, l);
  if (sdk::numel(index) == 0) return;
  const int key_bits = scatter_add_key_bits(lane_count(index, axis), out.shape[axis], sdk::numel(index));
  if (key_bits <= 32) return scatter_add_sorted<uint32_t>(c, axis, key_bits, l);
  scatter_add_sorted<uint64_t>(c, axis, key_bits, l);
}

}  // namespace ingot::cuda
