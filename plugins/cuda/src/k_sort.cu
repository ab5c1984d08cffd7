// SORT and TOPK along an axis: a stable order in which NaN is the largest value (torch), ties by
// the lower index; TOPK keeps the first k. Each element's rank is counted against its whole lane
// (one block per lane): exact and deterministic, O(n^2) per lane, so meant for lanes up to a few
// thousand values; a CUB segmented radix sort would replace it for long lanes.
#include "k_common.cuh"

namespace ingot::cuda {
namespace {

template <class K>
__device__ __forceinline__ bool is_nan(K v) {
  if constexpr (std::is_floating_point_v<K>) return v != v;
  else return false;
}

template <class K>
__device__ __forceinline__ bool before(K x, K y, bool descending) {
  if (descending) return (is_nan(x) && !is_nan(y)) || x > y;
  return (!is_nan(x) && is_nan(y)) || x < y;
}

template <class K, class E>
__global__ void rank_sort_kernel(const E* in, E* values, int64_t* indices, Indexer<3> lanes, int64_t n_lanes, int64_t n,
                                 int64_t k, int64_t s_in, int64_t s_val, int64_t s_idx, int32_t dtype, bool descending) {
  for (int64_t l = blockIdx.x; l < n_lanes; l += gridDim.x) {
    int64_t off[3];
    lanes.offsets(l, off);
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      const K kj = load_as<K>(in, dtype, off[0] + j * s_in);
      int64_t rank = 0;
      for (int64_t i = 0; i < n; ++i) {
        if (i == j) continue;
        const K ki = load_as<K>(in, dtype, off[0] + i * s_in);
        if (before(ki, kj, descending) || (i < j && !before(kj, ki, descending))) ++rank;
      }
      if (rank < k) {
        values[off[1] + rank * s_val] = in[off[0] + j * s_in];
        indices[off[2] + rank * s_idx] = j;
      }
    }
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

struct SortArgs {
  int axis;
  bool descending;
  int64_t k;
};

SortArgs args_of(const sdk::OpCall& c) {
  const int ndim = c.in[0].ndim;
  if (c.op == INGOT_OP_SORT) {
    const auto& a = sdk::attr<ingot_attr_sort>(c.attrs);
    const int axis = a.axis < 0 ? a.axis + ndim : a.axis;
    return {axis, a.descending != 0, axis >= 0 && axis < ndim ? c.in[0].shape[axis] : -1};
  }
  const auto& a = sdk::attr<ingot_attr_topk>(c.attrs);
  return {a.axis < 0 ? a.axis + ndim : a.axis, a.largest != 0, a.k};
}

}  // namespace

bool sort_supports(const sdk::OpCall& c) {
  if (!all_device_strided(c) || c.n_in != 1 || c.n_out != 2 || c.attrs == nullptr) return false;
  const ingot_tensor_desc& in = c.in[0];
  if (!has_dtype(INGOT_DTYPES_NUM, in.dtype) || in.ndim < 1) return false;
  if (c.out[0].dtype != in.dtype || c.out[1].dtype != INGOT_I64) return false;
  const SortArgs a = args_of(c);
  if (a.axis < 0 || a.axis >= in.ndim || a.k < 0 || a.k > in.shape[a.axis]) return false;
  for (int o = 0; o < 2; ++o) {
    if (c.out[o].ndim != in.ndim) return false;
    for (int d = 0; d < in.ndim; ++d)
      if (c.out[o].shape[d] != (d == a.axis ? a.k : in.shape[d])) return false;
  }
  return true;
}

void sort_run(const sdk::OpCall& c, const Launch& l) {
  const ingot_tensor_desc &in = c.in[0], &val = c.out[0], &idx = c.out[1];
  const SortArgs a = args_of(c);
  Indexer<3> lanes{};
  lanes.ndim = in.ndim;
  int64_t n_lanes = 1;
  for (int d = 0; d < in.ndim; ++d) {
    lanes.shape[d] = d == a.axis ? 1 : in.shape[d];
    lanes.strides[0][d] = in.strides[d];
    lanes.strides[1][d] = val.strides[d];
    lanes.strides[2][d] = idx.strides[d];
    n_lanes *= lanes.shape[d];
  }
  const int64_t n = in.shape[a.axis];
  if (n_lanes == 0 || n == 0 || a.k == 0) return;
  const unsigned grid = static_cast<unsigned>(n_lanes < 65536 ? n_lanes : 65536);
  const bool is_float = has_dtype(INGOT_DTYPES_FLOAT, in.dtype);
  visit_size(in.dtype, [&](auto tag) {
    using E = decltype(tag);
    const E* src = sdk::data_ptr<const E>(in);
    if (is_float) {
      rank_sort_kernel<double, E><<<grid, kThreads, 0, l.stream>>>(src, sdk::data_ptr<E>(val), sdk::data_ptr<int64_t>(idx),
                                                                  lanes, n_lanes, n, a.k, in.strides[a.axis],
                                                                  val.strides[a.axis], idx.strides[a.axis], in.dtype,
                                                                  a.descending);
    } else {
      rank_sort_kernel<int64_t, E><<<grid, kThreads, 0, l.stream>>>(src, sdk::data_ptr<E>(val),
                                                                   sdk::data_ptr<int64_t>(idx), lanes, n_lanes, n, a.k,
                                                                   in.strides[a.axis], val.strides[a.axis],
                                                                   idx.strides[a.axis], in.dtype, a.descending);
    }
  });
  check_launch("sort");
}

}  // namespace ingot::cuda
