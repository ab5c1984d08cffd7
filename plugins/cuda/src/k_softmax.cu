// SOFTMAX / LOG_SOFTMAX along an axis (max-subtracted) and their backward ops, which take
// (y, grad_y): softmax gx = y * (gy - sum(gy * y)); log_softmax gx = gy - exp(y) * sum(gy).
// A warp per lane (lanes up to 1024 long) or a block per lane, looping over lanes and along them
// (any number of lanes, any length); float accumulation for f32/f16/bf16, double for f64.
#include "k_common.cuh"

namespace ingot::cuda {
namespace {

template <class A>
__device__ A block_max(A v) {
  __shared__ A vals[32];
  for (int o = 16; o > 0; o >>= 1) {
    const A w = __shfl_down_sync(0xffffffffu, v, o);
    v = (w != w || w > v) ? w : v;
  }
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  __syncthreads();
  if (lane == 0) vals[warp] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (unsigned k = 1; k < blockDim.x / 32; ++k) v = (vals[k] != vals[k] || vals[k] > v) ? vals[k] : v;
    vals[0] = v;
  }
  __syncthreads();
  return vals[0];
}

template <class A>
__device__ A block_total(A v) {
  __shared__ A total;
  v = block_sum(v);
  if (threadIdx.x == 0) total = v;
  __syncthreads();
  return total;
}

// The same over a warp, by butterfly: every lane gets the result (a + b == b + a exactly, so all
// lanes hold the same value).
template <class A>
__device__ __forceinline__ A warp_max(A v) {
  for (int o = 16; o > 0; o >>= 1) {
    const A w = __shfl_xor_sync(0xffffffffu, v, o);
    v = (w != w || w > v) ? w : v;
  }
  return v;
}
template <class A>
__device__ __forceinline__ A warp_total(A v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// One lane (n values at strides so / s0 / s1) by `width` threads, thread t taking j = t, t + width,
// ...; max_all / sum_all combine a value over those threads.
template <class T, class A, class Max, class Sum>
__device__ __forceinline__ void softmax_lane(int32_t op, T* y, const T* x, const T* g, int64_t n, int64_t so,
                                             int64_t s0, int64_t s1, int t, int width, Max max_all, Sum sum_all) {
  if (op == INGOT_OP_SOFTMAX || op == INGOT_OP_LOG_SOFTMAX) {
    A m = -INFINITY;
    for (int64_t j = t; j < n; j += width) {
      const A v = cvt<A>(x[j * s0]);
      m = (v != v || v > m) ? v : m;
    }
    m = max_all(m);
    if (isinf(m) && m < 0) m = 0;  // all -inf: avoid inf - inf
    A s = 0;
    for (int64_t j = t; j < n; j += width) s += exp(cvt<A>(x[j * s0]) - m);
    s = sum_all(s);
    const A log_s = log(s);
    for (int64_t j = t; j < n; j += width) {
      const A v = cvt<A>(x[j * s0]) - m;
      y[j * so] = cvt<T>(op == INGOT_OP_SOFTMAX ? exp(v) / s : v - log_s);
    }
  } else {
    A s = 0;
    for (int64_t j = t; j < n; j += width)
      s += op == INGOT_OP_SOFTMAX_BWD ? cvt<A>(g[j * s1]) * cvt<A>(x[j * s0]) : cvt<A>(g[j * s1]);
    s = sum_all(s);
    for (int64_t j = t; j < n; j += width) {
      const A yv = cvt<A>(x[j * s0]), gv = cvt<A>(g[j * s1]);
      y[j * so] = cvt<T>(op == INGOT_OP_SOFTMAX_BWD ? yv * (gv - s) : gv - exp(yv) * s);
    }
  }
}

template <class T>
using softmax_acc_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

// A warp per lane: warps stride over the lanes (any count; the grid is capped).
template <class T>
__global__ void softmax_warp_kernel(int32_t op, T* out, const T* in0, const T* in1, Indexer<3> lanes, int64_t n_lanes,
                                    int64_t n, int64_t so, int64_t s0, int64_t s1) {
  using A = softmax_acc_t<T>;
  const int64_t warps = gridDim.x * static_cast<int64_t>(blockDim.x) / 32;
  for (int64_t l = (blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x) / 32; l < n_lanes; l += warps) {
    int64_t off[3];
    lanes.offsets(l, off);
    softmax_lane<T, A>(
        op, out + off[0], in0 + off[1], in1 + off[2], n, so, s0, s1, threadIdx.x % 32, 32,
        [](A v) { return warp_max(v); }, [](A v) { return warp_total(v); });
  }
}

// A block per lane: blocks stride over the lanes, threads along each (any length).
// lanes: over all lanes, strides {out, in0, in1}; s*: strides along the axis.
template <class T>
__global__ void softmax_kernel(int32_t op, T* out, const T* in0, const T* in1, Indexer<3> lanes, int64_t n_lanes,
                               int64_t n, int64_t so, int64_t s0, int64_t s1) {
  using A = softmax_acc_t<T>;
  for (int64_t l = blockIdx.x; l < n_lanes; l += gridDim.x) {
    int64_t off[3];
    lanes.offsets(l, off);
    softmax_lane<T, A>(
        op, out + off[0], in0 + off[1], in1 + off[2], n, so, s0, s1, threadIdx.x, blockDim.x,
        [](A v) { return block_max(v); }, [](A v) { return block_total(v); });
    __syncthreads();  // the next lane reuses the shared reduction slots
  }
}

}  // namespace

bool softmax_supports(const sdk::OpCall& c) {
  const bool backward = c.op == INGOT_OP_SOFTMAX_BWD || c.op == INGOT_OP_LOG_SOFTMAX_BWD;
  if (!all_device_strided(c) || c.n_in != (backward ? 2 : 1) || c.n_out != 1 || !has_attr<ingot_attr_axis>(c.attrs))
    return false;
  const ingot_tensor_desc& out = c.out[0];
  if (!has_dtype(INGOT_DTYPES_FLOAT, out.dtype) || out.ndim < 1) return false;
  for (int i = 0; i < c.n_in; ++i) {
    if (c.in[i].dtype != out.dtype || c.in[i].ndim != out.ndim) return false;
    for (int d = 0; d < out.ndim; ++d)
      if (c.in[i].shape[d] != out.shape[d]) return false;
  }
  int axis = sdk::attr<ingot_attr_axis>(c.attrs).axis;
  axis = axis < 0 ? axis + out.ndim : axis;
  return axis >= 0 && axis < out.ndim;
}

void softmax_run(const sdk::OpCall& c, const Launch& l) {
  const ingot_tensor_desc& out = c.out[0];
  int axis = sdk::attr<ingot_attr_axis>(c.attrs).axis;
  axis = axis < 0 ? axis + out.ndim : axis;
  const bool backward = c.n_in == 2;
  const ingot_tensor_desc& in1 = backward ? c.in[1] : c.in[0];
  Indexer<3> lanes{};
  lanes.ndim = out.ndim;
  int64_t n_lanes = 1;
  for (int d = 0; d < out.ndim; ++d) {
    lanes.shape[d] = d == axis ? 1 : out.shape[d];
    lanes.strides[0][d] = out.strides[d];
    lanes.strides[1][d] = c.in[0].strides[d];
    lanes.strides[2][d] = in1.strides[d];
    n_lanes *= lanes.shape[d];
  }
  const int64_t n = out.shape[axis];
  if (n_lanes == 0 || n == 0) return;
  flatten(lanes);
  const int64_t so = out.strides[axis], s0 = c.in[0].strides[axis], s1 = in1.strides[axis];
  visit_float(out.dtype, "softmax", [&](auto tag) {
    using T = decltype(tag);
    T* y = sdk::data_ptr<T>(out);
    const T* x = sdk::data_ptr<const T>(c.in[0]);
    const T* g = sdk::data_ptr<const T>(in1);
    if (n <= 1024) {  // a block would leave most of its threads idle
      softmax_warp_kernel<T>
          <<<grid_for(n_lanes * 32, l), kThreads, 0, l.stream>>>(c.op, y, x, g, lanes, n_lanes, n, so, s0, s1);
    } else {
      const auto grid = static_cast<unsigned>(n_lanes < 65536 ? n_lanes : 65536);  // a grid-stride loop covers more
      softmax_kernel<T><<<grid, kThreads, 0, l.stream>>>(c.op, y, x, g, lanes, n_lanes, n, so, s0, s1);
    }
  });
  check_launch("softmax");
}

}  // namespace ingot::cuda
