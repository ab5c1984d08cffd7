// SUM / MEAN / MAX / MIN to the output's shape (right-aligned; each output dim the input's or 1),
// accumulating in double (f32 / f64, like the reference), float (f16 / bf16) or wrapping int64
// (integers), in an order fixed by the shapes and the GPU: deterministic from run to run.
// ARGMAX along an axis: first maximum, NaN counts as the maximum (torch).
#include <algorithm>
#include <cmath>

#include "k_common.cuh"

namespace ingot::cuda {
namespace {

template <class T>
using acc_t = std::conditional_t<is_half_v<T>, float, std::conditional_t<std::is_floating_point_v<T>, double, int64_t>>;

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

// v combined over the warp by a fixed shuffle tree; valid in lane 0.
template <class A>
__device__ __forceinline__ A warp_combine(int32_t op, A v) {
  for (int o = 16; o > 0; o >>= 1) v = combine(op, v, __shfl_down_sync(0xffffffffu, v, o));
  return v;
}

// v combined over the block (blockDim.x a multiple of 32) in a fixed order; valid in thread 0.
template <class A>
__device__ A block_combine(int32_t op, A v) {
  __shared__ A warp_vals[32];
  v = warp_combine(op, v);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) warp_vals[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = threadIdx.x < blockDim.x / 32 ? warp_vals[lane] : identity<A>(op);
    v = warp_combine(op, v);
  }
  __syncthreads();  // warp_vals is written again by the next call
  return v;
}

template <class A>
__device__ __forceinline__ void store_result(int32_t op, void* out, int32_t out_dt, int64_t off, A acc, int64_t count) {
  if (op == INGOT_OP_MEAN)
    store_as<double>(out, out_dt, off, static_cast<double>(acc) / static_cast<double>(count));
  else
    store_as<A>(out, out_dt, off, acc);
}

// Where one kernel's result for output o goes: with one slice of the reduced elements, the output
// itself; with several, partial[slice * n_out + o] for reduce_finish_kernel.
template <class A>
struct Sink {
  void* out;
  int32_t out_dt;
  A* partial;
  int64_t n_out;
  int64_t count;  // reduced elements per output (MEAN's divisor)
};

// Outputs in groups of `width` threads (32: a warp per output; blockDim.x: the block), each
// striding over the reduced elements of slice blockIdx.x: [blockIdx.x * chunk, + chunk). For
// reductions over the innermost (contiguous) dims: consecutive threads read consecutive elements.
// kept: over the outputs, strides {input, output}; red: over one output's reduced elements.
template <class T>
__global__ void reduce_rows_kernel(int32_t op, const T* in, Indexer<2> kept, Indexer<1> red, int64_t chunk, int width,
                                   Sink<acc_t<T>> sink) {
  using A = acc_t<T>;
  const int groups = blockDim.x / width, group = threadIdx.x / width, t = threadIdx.x % width;
  const int64_t r0 = blockIdx.x * chunk, r1 = min(sink.count, r0 + chunk);
  // base is the same in every thread of the block, so block_combine's barriers are reached by all.
  for (int64_t base = blockIdx.y * static_cast<int64_t>(groups); base < sink.n_out;
       base += gridDim.y * static_cast<int64_t>(groups)) {
    const int64_t o = base + group;
    int64_t ko[2] = {0, 0};
    A acc = identity<A>(op);
    if (o < sink.n_out) {
      kept.offsets(o, ko);
#pragma unroll 4
      for (int64_t r = r0 + t; r < r1; r += width) {
        int64_t ro[1];
        red.offsets(r, ro);
        acc = combine(op, acc, cvt<A>(in[ko[0] + ro[0]]));
      }
    }
    acc = width == 32 ? warp_combine(op, acc) : block_combine(op, acc);
    if (t == 0 && o < sink.n_out) {
      if (gridDim.x == 1)
        store_result(op, sink.out, sink.out_dt, ko[1], acc, sink.count);
      else
        sink.partial[blockIdx.x * sink.n_out + o] = acc;
    }
  }
}

// Outputs along threadIdx.x (consecutive outputs: for reductions over outer dims, consecutive
// elements of the input's contiguous innermost dim, so a warp's loads coalesce) and the reduced
// elements of slice blockIdx.y along threadIdx.y; the blockDim.y results of an output combine in
// shared memory in order of threadIdx.y.
template <class T>
__global__ void reduce_columns_kernel(int32_t op, const T* in, Indexer<2> kept, Indexer<1> red, int64_t chunk,
                                      Sink<acc_t<T>> sink) {
  using A = acc_t<T>;
  __shared__ A part[kThreads];  // [threadIdx.y][threadIdx.x]; blockDim.x * blockDim.y == kThreads
  const int64_t r0 = blockIdx.y * chunk, r1 = min(sink.count, r0 + chunk);
  const int slot = threadIdx.y * blockDim.x + threadIdx.x;
  for (int64_t base = blockIdx.x * static_cast<int64_t>(blockDim.x); base < sink.n_out;
       base += gridDim.x * static_cast<int64_t>(blockDim.x)) {
    const int64_t o = base + threadIdx.x;
    int64_t ko[2] = {0, 0};
    A acc = identity<A>(op);
    if (o < sink.n_out) {
      kept.offsets(o, ko);
#pragma unroll 4
      for (int64_t r = r0 + threadIdx.y; r < r1; r += blockDim.y) {
        int64_t ro[1];
        red.offsets(r, ro);
        acc = combine(op, acc, cvt<A>(in[ko[0] + ro[0]]));
      }
    }
    part[slot] = acc;
    __syncthreads();
    if (threadIdx.y == 0 && o < sink.n_out) {
      for (unsigned y = 1; y < blockDim.y; ++y) acc = combine(op, acc, part[y * blockDim.x + threadIdx.x]);
      if (gridDim.y == 1)
        store_result(op, sink.out, sink.out_dt, ko[1], acc, sink.count);
      else
        sink.partial[blockIdx.y * sink.n_out + o] = acc;
    }
    __syncthreads();  // part is rewritten for the next outputs
  }
}

// Second pass of a split reduction: a warp per output combines its `splits` partial results
// (lanes stride over them, then a fixed shuffle tree) and writes the output.
template <class A>
__global__ void reduce_finish_kernel(int32_t op, Indexer<2> kept, int64_t splits, Sink<A> sink) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = gridDim.x * static_cast<int64_t>(blockDim.x) / 32;
  for (int64_t o = (blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x) / 32; o < sink.n_out; o += warps) {
    A acc = identity<A>(op);
    for (int64_t s = lane; s < splits; s += 32) acc = combine(op, acc, sink.partial[s * sink.n_out + o]);
    acc = warp_combine(op, acc);
    if (lane == 0) {
      int64_t ko[2];
      kept.offsets(o, ko);
      store_result(op, sink.out, sink.out_dt, ko[1], acc, sink.count);
    }
  }
}

// ARGMAX candidates: (v, j) beats (w, k) when v is NaN and w is not, or both are NaN or equal and
// j < k, or v > w; so the overall winner is the first NaN, else the first maximum (the reference).
template <class C>
__device__ __forceinline__ bool beats(C v, int64_t j, C w, int64_t k) {
  if constexpr (std::is_floating_point_v<C>) {
    const bool v_nan = v != v, w_nan = w != w;
    if (v_nan || w_nan) return v_nan && (!w_nan || j < k);
  }
  return v > w || (v == w && j < k);
}

// Warp per lane (the line of n elements at `step` that one output index summarizes): lane t scans
// j = t, t + 32, ... and the 32 candidates merge by `beats`. Empty lanes (n < 32) hold index -1.
template <class T>
__global__ void argmax_warp_kernel(const T* in, int64_t* out, Indexer<2> lanes, int64_t n_lanes, int64_t n,
                                   int64_t step) {
  using C = std::conditional_t<std::is_floating_point_v<compute_t<T>>, compute_t<T>, long long>;
  const int t = threadIdx.x % 32;
  const int64_t warps = gridDim.x * static_cast<int64_t>(blockDim.x) / 32;
  for (int64_t l = (blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x) / 32; l < n_lanes; l += warps) {
    int64_t off[2];
    lanes.offsets(l, off);
    C best = C(0);
    int64_t best_j = -1;
    for (int64_t j = t; j < n; j += 32) {
      const C v = cvt<C>(in[off[0] + j * step]);
      if (best_j < 0 || beats(v, j, best, best_j)) best = v, best_j = j;
    }
    for (int o = 16; o > 0; o >>= 1) {
      const C v = __shfl_down_sync(0xffffffffu, best, o);
      const long long j = __shfl_down_sync(0xffffffffu, static_cast<long long>(best_j), o);
      if (j >= 0 && (best_j < 0 || beats(v, j, best, best_j))) best = v, best_j = j;
    }
    if (t == 0) out[off[1]] = best_j;
  }
}

// Thread per lane, for lanes that are consecutive in memory (a warp's loads coalesce).
template <class T>
__global__ void argmax_thread_kernel(const T* in, int64_t* out, Indexer<2> lanes, int64_t n_lanes, int64_t n,
                                     int64_t step) {
  using C = std::conditional_t<std::is_floating_point_v<compute_t<T>>, compute_t<T>, long long>;
  INGOT_GRID_STRIDE(l, n_lanes) {
    int64_t off[2];
    lanes.offsets(l, off);
    C best = cvt<C>(in[off[0]]);
    int64_t best_j = 0;
    for (int64_t j = 1; j < n; ++j) {
      const C v = cvt<C>(in[off[0] + j * step]);
      if (beats(v, j, best, best_j)) best = v, best_j = j;
    }
    out[off[1]] = best_j;
  }
}

int wrap_axis(int axis, int ndim) { return axis < 0 ? axis + ndim : axis; }

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Blocks that fill the GPU (8 of kThreads threads per SM).
int64_t fill_blocks(const Launch& l) { return static_cast<int64_t>(l.sm_count > 0 ? l.sm_count : 80) * 8; }

// Slices of `count` reduced elements per output: enough blocks to fill the GPU when there are few
// outputs, at least `min_per_slice` elements each, at most 1024 (the finishing warp's loop).
int64_t slices_for(int64_t count, int64_t out_blocks, int64_t min_per_slice, const Launch& l) {
  if (out_blocks >= fill_blocks(l) || count <= min_per_slice) return 1;
  const int64_t want = ceil_div(fill_blocks(l), out_blocks);
  const int64_t most = ceil_div(count, min_per_slice);
  return std::max<int64_t>(1, std::min<int64_t>({want, most, 1024}));
}

template <class T>
void launch_reduce(const sdk::OpCall& c, const Launch& l, const Indexer<2>& kept, const Indexer<1>& red, int64_t n_out,
                   int64_t count) {
  using A = acc_t<T>;
  const T* in = sdk::data_ptr<const T>(c.in[0]);
  // Columns when the input's contiguous dim is kept and has a warp's width of outputs (or each
  // output has few elements): threads run along the outputs; else rows: threads run along each
  // output's reduced elements.
  const bool contiguous_kept = kept.ndim > 0 && kept.strides[0][kept.ndim - 1] == 1 && kept.shape[kept.ndim - 1] >= 32;
  const bool columns = contiguous_kept || count < 32;
  dim3 block(kThreads), grid(1);
  int width = 32;
  int64_t splits = 1;
  if (columns) {
    block.y = count >= 8 ? 8 : (count >= 4 ? 4 : (count >= 2 ? 2 : 1));
    block.x = kThreads / block.y;
    const int64_t out_blocks = ceil_div(n_out, block.x);
    splits = slices_for(count, out_blocks, int64_t{32} * block.y, l);
    grid.x = static_cast<unsigned>(std::min<int64_t>(out_blocks, 1 << 20));
  } else {
    width = count >= 1024 ? kThreads : 32;
    const int64_t out_blocks = ceil_div(n_out, kThreads / width);
    splits = width == kThreads ? slices_for(count, out_blocks, int64_t{16} * kThreads, l) : 1;
    grid.y = static_cast<unsigned>(std::min<int64_t>(out_blocks, 65535));
  }
  const int64_t chunk = std::max<int64_t>(1, ceil_div(count, splits));
  splits = std::max<int64_t>(1, ceil_div(count, chunk));  // no empty slice (count 0: one)
  if (columns)
    grid.y = static_cast<unsigned>(splits);
  else
    grid.x = static_cast<unsigned>(splits);
  Scratch partial(*l.mem, splits > 1 ? static_cast<size_t>(splits * n_out) * sizeof(A) : 0);
  const Sink<A> sink{sdk::data_ptr(c.out[0]), c.out[0].dtype, partial.as<A>(), n_out, count};
  if (columns)
    reduce_columns_kernel<T><<<grid, block, 0, l.stream>>>(c.op, in, kept, red, chunk, sink);
  else
    reduce_rows_kernel<T><<<grid, block, 0, l.stream>>>(c.op, in, kept, red, chunk, width, sink);
  check_launch("reduce");
  if (splits > 1) {
    const auto blocks = static_cast<unsigned>(std::min<int64_t>(ceil_div(n_out, kThreads / 32), fill_blocks(l)));
    reduce_finish_kernel<A><<<blocks, kThreads, 0, l.stream>>>(c.op, kept, splits, sink);
    check_launch("reduce (finish)");
  }
}

void argmax_run(const sdk::OpCall& c, const Launch& l) {
  const ingot_tensor_desc &in = c.in[0], &out = c.out[0];
  const int axis = wrap_axis(sdk::attr<ingot_attr_axis>(c.attrs).axis, in.ndim);
  Indexer<2> lanes{};
  lanes.ndim = in.ndim;
  for (int d = 0, j = 0; d < in.ndim; ++d) {
    const bool keep_dim = out.ndim == in.ndim;
    lanes.shape[d] = d == axis ? 1 : in.shape[d];
    lanes.strides[0][d] = in.strides[d];
    lanes.strides[1][d] = d == axis ? 0 : out.strides[keep_dim ? d : j];
    if (d != axis) ++j;
  }
  flatten(lanes);
  const int64_t n_lanes = indexer_numel(lanes), n = in.shape[axis], step = in.strides[axis];
  if (n_lanes == 0) return;
  // Many lanes side by side in memory: a thread each reads coalesced; else a warp each.
  const bool thread_per_lane = n_lanes >= 2048 && lanes.ndim > 0 && lanes.strides[0][lanes.ndim - 1] == 1;
  visit_dtype(in.dtype, "argmax", [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      const T* x = sdk::data_ptr<const T>(in);
      int64_t* y = sdk::data_ptr<int64_t>(out);
      if (thread_per_lane) {
        argmax_thread_kernel<T><<<grid_for(n_lanes, l), kThreads, 0, l.stream>>>(x, y, lanes, n_lanes, n, step);
      } else {
        const auto blocks = static_cast<unsigned>(std::min<int64_t>(ceil_div(n_lanes, kThreads / 32), fill_blocks(l)));
        argmax_warp_kernel<T><<<blocks, kThreads, 0, l.stream>>>(x, y, lanes, n_lanes, n, step);
      }
    }
  });
  check_launch("argmax");
}

}  // namespace

bool reduce_supports(const sdk::OpCall& c) {
  if (!all_device_strided(c) || c.n_in != 1 || c.n_out != 1) return false;
  const ingot_tensor_desc &in = c.in[0], &out = c.out[0];
  if (!has_dtype(c.op == INGOT_OP_MEAN ? INGOT_DTYPES_FLOAT : INGOT_DTYPES_NUM, in.dtype)) return false;
  if (c.op == INGOT_OP_ARGMAX) {
    if (out.dtype != INGOT_I64 || !has_attr<ingot_attr_axis>(c.attrs)) return false;
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
  if (c.op == INGOT_OP_ARGMAX) return argmax_run(c, l);
  const ingot_tensor_desc &in = c.in[0], &out = c.out[0];
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
  flatten(kept);
  flatten(red);
  visit_dtype(in.dtype, "reduce", [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) launch_reduce<T>(c, l, kept, red, n_out, count);
  });
}

}  // namespace ingot::cuda
