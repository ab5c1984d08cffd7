// SORT and TOPK along an axis, in the reference's order: stable, NaN the largest value (torch),
// -0 equal to +0, ties by the lower index in both directions; TOPK keeps the first k. Short lanes
// count each element's rank against its lane (one block per lane, O(n^2)); longer ones sort
// order-preserving integer keys with a stable radix sort (sort_plan.h picks, radix_sort.h sorts).
#include "k_common.cuh"
#include "radix_sort.h"
#include "sort_keys.h"
#include "sort_plan.h"

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

// Pair q = lane * n + i gets the key of element i of its lane (inverted for descending order, so
// that an ascending stable sort keeps ties in index order), the lane above it unless `lane_shift`
// is 0, and its position q as the value.
template <class K>
__global__ void make_keys_kernel(const void* in, int32_t dtype, Indexer<1> lanes, int64_t n, int64_t s_in, int key_bits,
                                 int lane_shift, bool descending, K* keys, uint32_t* values, int64_t total) {
  const uint64_t mask = key_bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << key_bits) - 1;
  int64_t off[1];
  INGOT_GRID_STRIDE(q, total) {
    const int64_t l = q / n, i = q - l * n;
    lanes.offsets(l, off);
    uint64_t key = order_key(in, dtype, off[0] + i * s_in);
    if (descending) key = mask - key;
    if (lane_shift > 0) key |= static_cast<uint64_t>(l) << lane_shift;
    keys[q] = static_cast<K>(key);
    values[q] = static_cast<uint32_t>(q);
  }
}

// Second pass of RadixTwoPass: the lane of each pair, as the key of a stable sort by lane.
__global__ void lane_keys_kernel(const uint32_t* values, int64_t n, uint32_t* keys, int64_t total) {
  INGOT_GRID_STRIDE(q, total) keys[q] = static_cast<uint32_t>(values[q] / static_cast<uint64_t>(n));
}

// The first k pairs of every lane (sorted: lane-major, then by key) become values and indices.
template <class E>
__global__ void write_sorted_kernel(const E* in, E* values, int64_t* indices, Indexer<3> lanes, int64_t n, int64_t k,
                                    int64_t s_in, int64_t s_val, int64_t s_idx, const uint32_t* order, int64_t count) {
  int64_t off[3];
  INGOT_GRID_STRIDE(q, count) {
    const int64_t l = q / k, r = q - l * k;
    const int64_t i = static_cast<int64_t>(order[l * n + r]) - l * n;
    lanes.offsets(l, off);
    values[off[1] + r * s_val] = in[off[0] + i * s_in];
    indices[off[2] + r * s_idx] = i;
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

struct Lanes {
  Indexer<3> ix;  // over the lanes: strides of in, values, indices
  int64_t count;
};

Lanes lanes_of(const sdk::OpCall& c, int axis) {
  Lanes s{{}, 1};
  s.ix.ndim = c.in[0].ndim;
  for (int d = 0; d < c.in[0].ndim; ++d) {
    s.ix.shape[d] = d == axis ? 1 : c.in[0].shape[d];
    s.ix.strides[0][d] = c.in[0].strides[d];
    s.ix.strides[1][d] = c.out[0].strides[d];
    s.ix.strides[2][d] = c.out[1].strides[d];
    s.count *= s.ix.shape[d];
  }
  return s;
}

void rank_sort(const sdk::OpCall& c, const SortArgs& a, const Lanes& lanes, const Launch& l) {
  const ingot_tensor_desc &in = c.in[0], &val = c.out[0], &idx = c.out[1];
  const int64_t n = in.shape[a.axis];
  const unsigned grid = static_cast<unsigned>(lanes.count < 65536 ? lanes.count : 65536);
  const bool is_float = has_dtype(INGOT_DTYPES_FLOAT, in.dtype);
  visit_size(in.dtype, [&](auto tag) {
    using E = decltype(tag);
    const E* src = sdk::data_ptr<const E>(in);
    if (is_float) {
      rank_sort_kernel<double, E><<<grid, kThreads, 0, l.stream>>>(
          src, sdk::data_ptr<E>(val), sdk::data_ptr<int64_t>(idx), lanes.ix, lanes.count, n, a.k, in.strides[a.axis],
          val.strides[a.axis], idx.strides[a.axis], in.dtype, a.descending);
    } else {
      rank_sort_kernel<int64_t, E><<<grid, kThreads, 0, l.stream>>>(
          src, sdk::data_ptr<E>(val), sdk::data_ptr<int64_t>(idx), lanes.ix, lanes.count, n, a.k, in.strides[a.axis],
          val.strides[a.axis], idx.strides[a.axis], in.dtype, a.descending);
    }
  });
  check_launch("sort (rank)");
}

// Keys of type K for every pair, then the sort(s); returns the positions in sorted order.
template <class K>
const uint32_t* radix_order(const sdk::OpCall& c, const SortArgs& a, const Lanes& lanes, const SortPlan& plan,
                            SortBuffers<uint32_t>& order, Scratch& key_mem, const Launch& l) {
  const ingot_tensor_desc& in = c.in[0];
  const int64_t n = in.shape[a.axis], total = lanes.count * n;
  Indexer<1> in_lanes{};
  in_lanes.ndim = lanes.ix.ndim;
  for (int d = 0; d < lanes.ix.ndim; ++d)
    in_lanes.shape[d] = lanes.ix.shape[d], in_lanes.strides[0][d] = lanes.ix.strides[0][d];
  SortBuffers<K> b{{key_mem.as<K>(), key_mem.as<K>() + total}, {order.values[0], order.values[1]}, 0};
  make_keys_kernel<K><<<grid_for(total, l), kThreads, 0, l.stream>>>(
      sdk::data_ptr<const void>(in), in.dtype, in_lanes, n, in.strides[a.axis], plan.key_bits,
      plan.lane_bits > 0 ? plan.key_bits : 0, a.descending, b.keys[0], b.values[0], total);
  check_launch("sort (keys)");
  sort_pairs(b, total, plan.end_bit, l);
  if (plan.path != SortPath::RadixTwoPass) return b.values[b.current];
  // Stable by lane on top of the order by key: key memory (8 bytes a pair) holds the 4-byte lanes.
  SortBuffers<uint32_t> by_lane{
      {key_mem.as<uint32_t>(), key_mem.as<uint32_t>() + total}, {b.values[b.current], b.values[1 - b.current]}, 0};
  lane_keys_kernel<<<grid_for(total, l), kThreads, 0, l.stream>>>(by_lane.values[0], n, by_lane.keys[0], total);
  check_launch("sort (lanes)");
  sort_pairs(by_lane, total, bits_for(static_cast<uint64_t>(lanes.count - 1)), l);
  return by_lane.values[by_lane.current];
}

void radix_sort(const sdk::OpCall& c, const SortArgs& a, const Lanes& lanes, const SortPlan& plan, const Launch& l) {
  const ingot_tensor_desc &in = c.in[0], &val = c.out[0], &idx = c.out[1];
  const int64_t n = in.shape[a.axis], total = lanes.count * n;
  Scratch value_mem(*l.mem, 2 * static_cast<size_t>(total) * sizeof(uint32_t));
  SortBuffers<uint32_t> order{{nullptr, nullptr}, {value_mem.as<uint32_t>(), value_mem.as<uint32_t>() + total}, 0};
  const bool wide = plan.path != SortPath::Radix32;
  Scratch key_mem(*l.mem, 2 * static_cast<size_t>(total) * (wide ? sizeof(uint64_t) : sizeof(uint32_t)));
  const uint32_t* sorted = wide ? radix_order<uint64_t>(c, a, lanes, plan, order, key_mem, l)
                                : radix_order<uint32_t>(c, a, lanes, plan, order, key_mem, l);
  const int64_t count = lanes.count * a.k;
  visit_size(in.dtype, [&](auto tag) {
    using E = decltype(tag);
    write_sorted_kernel<E><<<grid_for(count, l), kThreads, 0, l.stream>>>(
        sdk::data_ptr<const E>(in), sdk::data_ptr<E>(val), sdk::data_ptr<int64_t>(idx), lanes.ix, n, a.k,
        in.strides[a.axis], val.strides[a.axis], idx.strides[a.axis], sorted, count);
  });
  check_launch("sort (write)");
}

}  // namespace

bool sort_supports(const sdk::OpCall& c) {
  if (!all_device_strided(c) || c.n_in != 1 || c.n_out != 2) return false;
  if (c.op == INGOT_OP_SORT ? !has_attr<ingot_attr_sort>(c.attrs) : !has_attr<ingot_attr_topk>(c.attrs)) return false;
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
  return plan_sort(sdk::numel(in) / (in.shape[a.axis] > 0 ? in.shape[a.axis] : 1), in.shape[a.axis], in.dtype).path !=
         SortPath::Decline;
}

void sort_run(const sdk::OpCall& c, const Launch& l) {
  const SortArgs a = args_of(c);
  const Lanes lanes = lanes_of(c, a.axis);
  const int64_t n = c.in[0].shape[a.axis];
  if (lanes.count == 0 || n == 0 || a.k == 0) return;
  const SortPlan plan = plan_sort(lanes.count, n, c.in[0].dtype);
  if (plan.path == SortPath::Rank) return rank_sort(c, a, lanes, l);
  radix_sort(c, a, lanes, plan, l);
}

}  // namespace ingot::cuda
