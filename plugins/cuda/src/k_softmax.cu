// SOFTMAX / LOG_SOFTMAX along an axis (max-subtracted) and their backward ops, which take
// (y, grad_y): softmax gx = y * (gy - sum(gy * y)); log_softmax gx = gy - exp(y) * sum(gy).
// One block per lane; float accumulation for f32/f16/bf16, double for f64.
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

// lanes: over all lanes, strides {out, in0, in1}; s*: strides along the axis.
template <class T>
__global__ void softmax_kernel(int32_t op, T* out, const T* in0, const T* in1, Indexer<3> lanes, int64_t n_lanes,
                               int64_t n, int64_t so, int64_t s0, int64_t s1) {
  using A = std::conditional_t<std::is_same_v<T, double>, double, float>;
  for (int64_t l = blockIdx.x; l < n_lanes; l += gridDim.x) {
    int64_t off[3];
    lanes.offsets(l, off);
    const T* x = in0 + off[0 + 1];
    T* y = out + off[0];
    if (op == INGOT_OP_SOFTMAX || op == INGOT_OP_LOG_SOFTMAX) {
      A m = -INFINITY;
      for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
        const A v = cvt<A>(x[j * s0]);
        m = (v != v || v > m) ? v : m;
      }
      m = block_max(m);
      if (isinf(m) && m < 0) m = 0;  // all -inf: avoid inf - inf
      A s = 0;
      for (int64_t j = threadIdx.x; j < n; j += blockDim.x) s += exp(cvt<A>(x[j * s0]) - m);
      s = block_total(s);
      const A log_s = log(s);
      for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
        const A v = cvt<A>(x[j * s0]) - m;
        y[j * so] = cvt<T>(op == INGOT_OP_SOFTMAX ? exp(v) / s : v - log_s);
      }
    } else {
      const T* g = in1 + off[2];
      A s = 0;
      for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
        s += op == INGOT_OP_SOFTMAX_BWD ? cvt<A>(g[j * s1]) * cvt<A>(x[j * s0]) : cvt<A>(g[j * s1]);
      s = block_total(s);
      for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
        const A yv = cvt<A>(x[j * s0]), gv = cvt<A>(g[j * s1]);
        y[j * so] = cvt<T>(op == INGOT_OP_SOFTMAX_BWD ? yv * (gv - s) : gv - exp(yv) * s);
      }
    }
    __syncthreads();  // the next lane reuses the shared reduction slots
  }
}

}  // namespace

bool softmax_supports(const sdk::OpCall& c) {
  const bool backward = c.op == INGOT_OP_SOFTMAX_BWD || c.op == INGOT_OP_LOG_SOFTMAX_BWD;
  if (!all_device_strided(c) || c.n_in != (backward ? 2 : 1) || c.n_out != 1 || c.attrs == nullptr) return false;
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
  const unsigned grid = static_cast<unsigned>(n_lanes < 65536 ? n_lanes : 65536);
  visit_float(out.dtype, "softmax", [&](auto tag) {
    using T = decltype(tag);
    softmax_kernel<T><<<grid, kThreads, 0, l.stream>>>(c.op, sdk::data_ptr<T>(out), sdk::data_ptr<const T>(c.in[0]),
                                                       sdk::data_ptr<const T>(in1), lanes, n_lanes, n,
                                                       out.strides[axis], c.in[0].strides[axis], in1.strides[axis]);
  });
  check_launch("softmax");
}

}  // namespace ingot::cuda
