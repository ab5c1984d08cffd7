// SUM / MEAN / MAX / MIN to the output's shape (right-aligned; each output dim the input's or 1),
// accumulating in double (floating inputs) or int64 (integers); one block per output element.
// ARGMAX along an axis: one thread per lane, first maximum, NaN counts as the maximum (torch).
#include <cmath>
#include <string>

#include "k_common.cuh"

namespace ingot::cuda {
namespace {

template <class A>
__device__ __forceinline__ A combine(int32_t op, A acc, A v) {
  if (op == INGOT_OP_SUM || op == INGOT_OP_MEAN) {
    if constexpr (std::is_integral_v<A>) return static_cast<A>(static_cast<uint64_t>(acc) + static_cast<uint64_t>(v));
    else return acc + v;
  }
  if constexpr (std::is_floating_point_v<A>) {
    if (acc != acc || v != v) return A(NAN);
  }
  return op == INGOT_OP_MAX ? (v > acc ? v : acc) : (v < acc ? v : acc);
}

template <class A>
__device__ A identity(int32_t op) {
  if (op == INGOT_OP_MAX) {
    if constexpr (std::is_floating_point_v<A>) return -INFINITY;
    else return INT64_MIN;
  }
  if (op == INGOT_OP_MIN) {
    if constexpr (std::is_floating_point_v<A>) return INFINITY;
    else return INT64_MAX;
  }
  return A(0);
}

template <class A>
__device__ A block_combine(int32_t op, A v) {
  __shared__ A warp_vals[32];
  for (int o = 16; o > 0; o >>= 1) v = combine(op, v, __shfl_down_sync(0xffffffffu, v, o));
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) warp_vals[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = threadIdx.x < blockDim.x / 32 ? warp_vals[lane] : identity<A>(op);
    for (int o = 16; o > 0; o >>= 1) v = combine(op, v, __shfl_down_sync(0xffffffffu, v, o));
  }
  __syncthreads();
  return v;
}

// kept: over output elements, strides {input, output}; red: over the reduced dims, {input}.
template <class A>
__global__ void reduce_kernel(int32_t op, const void* in, int32_t in_dt, void* out, int32_t out_dt, Indexer<2> kept,
                              int64_t n_out, Indexer<1> red, int64_t count) {
  for (int64_t o = blockIdx.x; o < n_out; o += gridDim.x) {
    int64_t ko[2], ro[1];
    kept.offsets(o, ko);
    A acc = identity<A>(op);
    for (int64_t r = threadIdx.x; r < count; r += blockDim.x) {
      red.offsets(r, ro);
      acc = combine(op, acc, load_as<A>(in, in_dt, ko[0] + ro[0]));
    }
    acc = block_combine(op, acc);
    if (threadIdx.x == 0) {
      if (op == INGOT_OP_MEAN) store_as<double>(out, out_dt, ko[1], static_cast<double>(acc) / static_cast<double>(count));
      else store_as<A>(out, out_dt, ko[1], acc);
    }
  }
}

template <class A>
__global__ void argmax_kernel(const void* in, int32_t in_dt, int64_t* out, Indexer<2> lanes, int64_t n_lanes, int64_t n,
                              int64_t step) {
  int64_t off[2];
  INGOT_GRID_STRIDE(l, n_lanes) {
    lanes.offsets(l, off);
    int64_t best_index = 0;
    A best = load_as<A>(in, in_dt, off[0]);
    for (int64_t j = 1; j < n; ++j) {
      if constexpr (std::is_floating_point_v<A>) {
        if (best != best) break;
      }
      const A v = load_as<A>(in, in_dt, off[0] + j * step);
      bool better = v > best;
      if constexpr (std::is_floating_point_v<A>) better = better || v != v;
      if (better) best = v, best_index = j;
    }
    out[off[1]] = best_index;
  }
}

bool is_float(int32_t dt) { return has_dtype(INGOT_DTYPES_FLOAT, dt); }

int wrap_axis(int axis, int ndim) { return axis < 0 ? axis + ndim : axis; }

}  // namespace

bool reduce_supports(const sdk::OpCall& c) {
  if (!all_device_strided(c) || c.n_in != 1 || c.n_out != 1) return false;
  const ingot_tensor_desc &in = c.in[0], &out = c.out[0];
  if (!has_dtype(c.op == INGOT_OP_MEAN ? INGOT_DTYPES_FLOAT : INGOT_DTYPES_NUM, in.dtype)) return false;
  if (c.op == INGOT_OP_ARGMAX) {
    if (out.dtype != INGOT_I64 || c.attrs == nullptr) return false;
    const int axis = wrap_axis(sdk::attr<ingot_attr_axis>(c.attrs).axis, in.ndim);
    if (axis < 0 || axis >= in.ndim || in.shape[axis] == 0) return false;
    if (out.ndim == in.ndim) {
      for (int d = 0; d < in.ndim; ++d)
        if (out.shape[d] != (d == axis ? 1 : in.shape[d])) return false;
      return true;
    }
    if (out.ndim != in.ndim - 1) return false;
    for (int d = 0, j = 0; d < in.ndim; ++d)
      if (d != axis && out.shape[j++] != in.shape[d]) return false;
    return true;
  }
  if (out.ndim > in.ndim || !has_dtype(INGOT_DTYPES_NUM, out.dtype)) return false;
  const int lead = in.ndim - out.ndim;
  for (int j = 0; j < out.ndim; ++j)
    if (out.shape[j] != in.shape[lead + j] && out.shape[j] != 1) return false;
  const int64_t n_out = sdk::numel(out);
  const bool empty = n_out > 0 && sdk::numel(in) == 0;
  return !(empty && (c.op == INGOT_OP_MAX || c.op == INGOT_OP_MIN));
}

void reduce_run(const sdk::OpCall& c, const Launch& l) {
  const ingot_tensor_desc &in = c.in[0], &out = c.out[0];
  if (c.op == INGOT_OP_ARGMAX) {
    const int axis = wrap_axis(sdk::attr<ingot_attr_axis>(c.attrs).axis, in.ndim);
    Indexer<2> lanes{};
    lanes.ndim = in.ndim;
    int64_t n_lanes = 1;
    for (int d = 0, j = 0; d < in.ndim; ++d) {
      const bool keep_dim = out.ndim == in.ndim;
      lanes.shape[d] = d == axis ? 1 : in.shape[d];
      lanes.strides[0][d] = in.strides[d];
      lanes.strides[1][d] = d == axis ? 0 : out.strides[keep_dim ? d : j];
      if (d != axis) ++j;
      n_lanes *= lanes.shape[d];
    }
    if (n_lanes == 0) return;
    visit_dtype(in.dtype, "argmax", [&](auto tag) {
      using A = std::conditional_t<std::is_floating_point_v<decltype(tag)> || is_half_v<decltype(tag)>, double, int64_t>;
      argmax_kernel<A><<<grid_for(n_lanes, l), kThreads, 0, l.stream>>>(sdk::data_ptr<const void>(in), in.dtype,
                                                                         sdk::data_ptr<int64_t>(out), lanes, n_lanes,
                                                                         in.shape[axis], in.strides[axis]);
    });
    return check_launch("argmax");
  }
  const int64_t n_out = sdk::numel(out);
  if (n_out == 0) return;
  Indexer<2> kept{};
  Indexer<1> red{};
  const int lead = in.ndim - out.ndim;
  int64_t count = 1;
  for (int d = 0; d < in.ndim; ++d) {
    const int j = d - lead;
    const bool reduced = j < 0 || (out.shape[j] == 1 && in.shape[d] != 1);
    if (reduced) {
      red.shape[red.ndim] = in.shape[d];
      red.strides[0][red.ndim++] = in.strides[d];
      count *= in.shape[d];
    } else {
      kept.shape[kept.ndim] = in.shape[d];
      kept.strides[0][kept.ndim] = in.strides[d];
      kept.strides[1][kept.ndim++] = out.strides[j];
    }
  }
  const unsigned grid = static_cast<unsigned>(n_out < 65536 ? n_out : 65536);
  if (is_float(in.dtype)) {
    reduce_kernel<double><<<grid, kThreads, 0, l.stream>>>(c.op, sdk::data_ptr<const void>(in), in.dtype,
                                                           sdk::data_ptr(out), out.dtype, kept, n_out, red, count);
  } else {
    reduce_kernel<int64_t><<<grid, kThreads, 0, l.stream>>>(c.op, sdk::data_ptr<const void>(in), in.dtype,
                                                            sdk::data_ptr(out), out.dtype, kept, n_out, red, count);
  }
  check_launch("reduce");
}

}  // namespace ingot::cuda
