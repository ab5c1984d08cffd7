// LAYER_NORM / BATCH_NORM and their backward ops on contiguous tensors, sums in double (like the
// reference). Layer norm: a block per row; its weight / bias gradients as blocked column sums.
// Batch norm: per-channel sums split over many blocks, then a per-channel pass and an elementwise
// pass. Optional per-feature tensors (weight, bias, running stats, mean/rstd) may be absent.
#include <algorithm>
#include <string>

#include "k_common.cuh"

namespace ingot::cuda {
namespace {

// A per-row / per-channel tensor: present (contiguous, `count` values) or absent (NULL / 0-size).
struct Vec {
  void* data;
  int32_t dtype;
};

__device__ __forceinline__ double vload(const Vec& v, int64_t i, double absent) {
  return v.data == nullptr ? absent : load_as<double>(v.data, v.dtype, i);
}
__device__ __forceinline__ void vstore(const Vec& v, int64_t i, double x) {
  if (v.data != nullptr) store_as<double>(v.data, v.dtype, i, x);
}

// The block's total, visible to every thread.
__device__ double block_total(double v) {
  __shared__ double total;
  v = block_sum(v);
  if (threadIdx.x == 0) total = v;
  __syncthreads();
  const double t = total;
  __syncthreads();
  return t;
}

// ---- layer norm: x viewed as [rows, inner] ----

template <class T>
__global__ void layer_norm_kernel(const T* x, T* y, int64_t rows, int64_t inner, Vec w, Vec b, Vec mean_out,
                                  Vec rstd_out, double eps) {
  for (int64_t i = blockIdx.x; i < rows; i += gridDim.x) {
    const T* xr = x + i * inner;
    double s = 0.0;
    for (int64_t j = threadIdx.x; j < inner; j += blockDim.x) s += cvt<double>(xr[j]);
    const double mu = block_total(s) / static_cast<double>(inner);
    double sq = 0.0;
    for (int64_t j = threadIdx.x; j < inner; j += blockDim.x) {
      const double d = cvt<double>(xr[j]) - mu;
      sq += d * d;
    }
    const double rs = 1.0 / sqrt(block_total(sq) / static_cast<double>(inner) + eps);
    if (threadIdx.x == 0) {
      vstore(mean_out, i, mu);
      vstore(rstd_out, i, rs);
    }
    for (int64_t j = threadIdx.x; j < inner; j += blockDim.x) {
      double v = (cvt<double>(xr[j]) - mu) * rs;
      if (w.data != nullptr) v *= vload(w, j, 1.0);
      if (b.data != nullptr) v += vload(b, j, 0.0);
      y[i * inner + j] = cvt<T>(v);
    }
  }
}

// gx = rstd * (g - mean(g) - xhat * mean(g * xhat)) with g = gy * weight, a block per row.
template <class T>
__global__ void layer_norm_bwd_kernel(const T* gy, const T* x, T* gx, int64_t rows, int64_t inner, Vec w, Vec mean,
                                      Vec rstd) {
  const double inv_n = 1.0 / static_cast<double>(inner);
  for (int64_t i = blockIdx.x; i < rows; i += gridDim.x) {
    const double mu = vload(mean, i, 0.0), rs = vload(rstd, i, 1.0);
    const int64_t row = i * inner;
    double sg = 0.0, sgx = 0.0;
    for (int64_t j = threadIdx.x; j < inner; j += blockDim.x) {
      const double g = cvt<double>(gy[row + j]) * vload(w, j, 1.0);
      sg += g, sgx += g * ((cvt<double>(x[row + j]) - mu) * rs);
    }
    sg = block_total(sg), sgx = block_total(sgx);
    for (int64_t j = threadIdx.x; j < inner; j += blockDim.x) {
      const double g = cvt<double>(gy[row + j]) * vload(w, j, 1.0);
      const double xhat = (cvt<double>(x[row + j]) - mu) * rs;
      gx[row + j] = cvt<T>(rs * (g - sg * inv_n - xhat * sgx * inv_n));
    }
  }
}

// grad_weight[j] = sum_i gy * xhat and grad_bias[j] = sum_i gy as blocked column sums: threads
// (x: 32 consecutive features, so loads coalesce; y: 8 rows) of block (bx, s) cover the rows of
// slice s; the 8 row-partials combine in shared memory in order, then either the result is
// written or, with several slices, partial[s * inner + j] for ln_param_finish_kernel.
constexpr int kTileX = 32, kTileY = kThreads / kTileX;

struct Sums2 {
  double a, b;
};

template <class T>
__global__ void ln_param_grad_kernel(const T* gy, const T* x, int64_t rows, int64_t inner, Vec mean, Vec rstd,
                                     int64_t chunk, Sums2* partial, Vec gw, Vec gb) {
  __shared__ Sums2 part[kTileY][kTileX];
  const int64_t i0 = blockIdx.y * chunk, i1 = min(rows, i0 + chunk);
  for (int64_t base = blockIdx.x * static_cast<int64_t>(kTileX); base < inner; base += gridDim.x * int64_t{kTileX}) {
    const int64_t j = base + threadIdx.x;
    double sw = 0.0, sb = 0.0;
    if (j < inner) {
      for (int64_t i = i0 + threadIdx.y; i < i1; i += kTileY) {
        const double d = cvt<double>(gy[i * inner + j]);
        sw += d * ((cvt<double>(x[i * inner + j]) - vload(mean, i, 0.0)) * vload(rstd, i, 1.0));
        sb += d;
      }
    }
    part[threadIdx.y][threadIdx.x] = Sums2{sw, sb};
    __syncthreads();
    if (threadIdx.y == 0 && j < inner) {
      for (int r = 1; r < kTileY; ++r) sw += part[r][threadIdx.x].a, sb += part[r][threadIdx.x].b;
      if (gridDim.y == 1) {
        vstore(gw, j, sw);
        vstore(gb, j, sb);
      } else {
        partial[blockIdx.y * inner + j] = Sums2{sw, sb};
      }
    }
    __syncthreads();  // part is rewritten for the next features
  }
}

__global__ void ln_param_finish_kernel(const Sums2* partial, int64_t splits, int64_t inner, Vec gw, Vec gb) {
  INGOT_GRID_STRIDE(j, inner) {
    double sw = 0.0, sb = 0.0;
    for (int64_t s = 0; s < splits; ++s) sw += partial[s * inner + j].a, sb += partial[s * inner + j].b;
    vstore(gw, j, sw);
    vstore(gb, j, sb);
  }
}

// ---- batch norm: x viewed as [n, channels, spatial]; a channel holds count = n * spatial values ----

// Where the values of a channel are, in 32-bit math (FastDivmod) when x has fewer than 2^31 values.
struct Channels {
  int64_t channels, spatial, count;
  int32_t index32;
  FastDivmod by_spatial, by_channels;

  // Offset of value j (0 <= j < count) of channel c.
  __device__ __forceinline__ int64_t at(int64_t c, int64_t j) const {
    if (index32) {
      uint32_t q, r;
      by_spatial.divmod(static_cast<uint32_t>(j), q, r);
      return (static_cast<int64_t>(q) * channels + c) * spatial + r;
    }
    return (j / spatial * channels + c) * spatial + j % spatial;
  }
  // Channel of the value at offset i.
  __device__ __forceinline__ int64_t of(int64_t i) const {
    if (index32) {
      uint32_t n, c;
      by_channels.divmod(by_spatial.div(static_cast<uint32_t>(i)), n, c);
      return c;
    }
    return i / spatial % channels;
  }
};

// Per-channel sums over slice blockIdx.x of every channel's values, in double, to
// partial[c * gridDim.x + blockIdx.x]. Forward (gy NULL): a = x - K and b = (x - K)^2 with K the
// channel's first value, a shift that keeps sum((x - mean)^2) = b - a^2 / n accurate ((K - mean)^2
// is at most n * var, so the cancellation costs at most log2(n) bits of double's 53). Backward:
// a = gy and b = gy * (x - mean).
template <class T>
__global__ void bn_sums_kernel(const T* x, const T* gy, Vec mean, Channels ch, int64_t chunk, Sums2* partial) {
  const int64_t j0 = blockIdx.x * chunk, j1 = min(ch.count, j0 + chunk);
  for (int64_t c = blockIdx.y; c < ch.channels; c += gridDim.y) {
    const double shift = gy == nullptr ? cvt<double>(x[c * ch.spatial]) : vload(mean, c, 0.0);
    double sa = 0.0, sb = 0.0;
#pragma unroll 4
    for (int64_t j = j0 + threadIdx.x; j < j1; j += blockDim.x) {
      const int64_t k = ch.at(c, j);
      const double d = cvt<double>(x[k]) - shift;
      const double a = gy == nullptr ? d : cvt<double>(gy[k]);
      sa += a, sb += a * d;
    }
    sa = block_sum(sa);
    sb = block_sum(sb);
    if (threadIdx.x == 0) partial[c * gridDim.x + blockIdx.x] = Sums2{sa, sb};
  }
}

// What the elementwise passes need per channel.
struct ChannelCoef {
  double mean, invstd, weight;
  double bias_or_sum_gy;  // forward: bias; backward: sum(gy)
  double sum_gy_xhat;     // backward only
};

// Forward, a thread per channel: mean and invstd from the slices' sums (training) or the running
// statistics (eval); running statistics updated with the unbiased variance; save_mean / save_invstd.
template <class T>
__global__ void bn_stats_kernel(const T* x, Channels ch, const Sums2* partial, int64_t splits, int training, double eps,
                                double momentum, Vec w, Vec b, Vec run_mean, Vec run_var, Vec mean_out, Vec invstd_out,
                                ChannelCoef* coef) {
  INGOT_GRID_STRIDE(c, ch.channels) {
    double mu, rs;
    if (training) {
      double s1 = 0.0, s2 = 0.0;
      for (int64_t s = 0; s < splits; ++s) s1 += partial[c * splits + s].a, s2 += partial[c * splits + s].b;
      const double n = static_cast<double>(ch.count), m1 = s1 / n;
      const double sq = max(s2 - s1 * m1, 0.0);  // sum of (x - mean)^2
      mu = cvt<double>(x[c * ch.spatial]) + m1;
      rs = 1.0 / sqrt(sq / n + eps);
      vstore(run_mean, c, (1.0 - momentum) * vload(run_mean, c, 0.0) + momentum * mu);
      vstore(run_var, c, (1.0 - momentum) * vload(run_var, c, 0.0) + momentum * (sq / (n - 1.0)));
    } else {
      mu = vload(run_mean, c, 0.0);
      rs = 1.0 / sqrt(vload(run_var, c, 1.0) + eps);
    }
    vstore(mean_out, c, mu);
    vstore(invstd_out, c, rs);
    coef[c] = ChannelCoef{mu, rs, vload(w, c, 1.0), vload(b, c, 0.0), 0.0};
  }
}

template <class T>
__global__ void bn_apply_kernel(const T* x, T* y, Channels ch, int64_t n, const ChannelCoef* coef) {
  INGOT_GRID_STRIDE(i, n) {
    const ChannelCoef k = coef[ch.of(i)];
    y[i] = cvt<T>((cvt<double>(x[i]) - k.mean) * k.invstd * k.weight + k.bias_or_sum_gy);
  }
}

// Backward, a thread per channel: grad_weight = sum(gy * xhat), grad_bias = sum(gy).
__global__ void bn_grad_stats_kernel(Channels ch, const Sums2* partial, int64_t splits, Vec w, Vec mean, Vec invstd,
                                     Vec gw, Vec gb, ChannelCoef* coef) {
  INGOT_GRID_STRIDE(c, ch.channels) {
    double sgy = 0.0, sgyd = 0.0;
    for (int64_t s = 0; s < splits; ++s) sgy += partial[c * splits + s].a, sgyd += partial[c * splits + s].b;
    const double rs = vload(invstd, c, 1.0), sgyx = sgyd * rs;
    vstore(gw, c, sgyx);
    vstore(gb, c, sgy);
    coef[c] = ChannelCoef{vload(mean, c, 0.0), rs, vload(w, c, 1.0), sgy, sgyx};
  }
}

// gx = invstd * w * (gy - mean(gy) - xhat * mean(gy * xhat)) (batch statistics) or invstd * w * gy
// (running statistics, constants).
template <class T>
__global__ void bn_grad_apply_kernel(const T* gy, const T* x, T* gx, Channels ch, int64_t n, const ChannelCoef* coef,
                                     int constant_stats) {
  const double inv_n = 1.0 / static_cast<double>(ch.count);
  INGOT_GRID_STRIDE(i, n) {
    const ChannelCoef k = coef[ch.of(i)];
    const double scale = k.invstd * k.weight, d = cvt<double>(gy[i]);
    if (constant_stats) {
      gx[i] = cvt<T>(scale * d);
    } else {
      const double xhat = (cvt<double>(x[i]) - k.mean) * k.invstd;
      gx[i] = cvt<T>(scale * (d - k.bias_or_sum_gy * inv_n - xhat * k.sum_gy_xhat * inv_n));
    }
  }
}

// ---- host side ----

// At run time: an absent optional tensor (undefined: no data; or 0-size).
bool absent(const ingot_tensor_desc& d) { return d.data == nullptr || sdk::numel(d) == 0; }

// An optional per-row / per-channel tensor: undefined (core describes it as 0-dim with no bytes),
// 0-size (never read), or `count` contiguous floating values on this device. supports() must not
// look at data pointers (core may ask before allocating outputs), so it goes by shape and bytes.
bool vec_ok(const ingot_tensor_desc& d, int64_t count) {
  if (d.ndim == 0 && d.nbytes == 0) return true;
  if (d.ndim > 0 && sdk::numel(d) == 0) return true;
  return is_device_strided(d) && sdk::is_contiguous(d) && sdk::numel(d) == count && has_dtype(INGOT_DTYPES_FLOAT, d.dtype);
}

void require(const ingot_tensor_desc& d, const char* what) {
  if (absent(d)) throw sdk::Failure(INGOT_ERR_INVALID_ARGUMENT, std::string("cuda norm: ") + what + " is required");
}
Vec vec(const ingot_tensor_desc& d, bool use = true) { return Vec{use && !absent(d) ? sdk::data_ptr(d) : nullptr, d.dtype}; }

bool same_dense(const ingot_tensor_desc& a, const ingot_tensor_desc& b) {
  if (!is_device_strided(a) || !is_device_strided(b) || !sdk::is_contiguous(a) || !sdk::is_contiguous(b)) return false;
  if (a.dtype != b.dtype || a.ndim != b.ndim) return false;
  for (int d = 0; d < a.ndim; ++d)
    if (a.shape[d] != b.shape[d]) return false;
  return true;
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Blocks that fill the GPU (8 of kThreads threads per SM).
int64_t fill_blocks(const Launch& l) { return static_cast<int64_t>(l.sm_count > 0 ? l.sm_count : 80) * 8; }

// Slices of `count` values for `groups` independent sums: enough blocks to fill the GPU, at least
// `min_per_slice` values each, at most 1024 (the finishing thread's loop); never an empty slice.
void split(int64_t count, int64_t groups, int64_t min_per_slice, const Launch& l, int64_t& splits, int64_t& chunk) {
  splits = std::min<int64_t>({ceil_div(fill_blocks(l), groups), ceil_div(count, min_per_slice), 1024});
  splits = std::max<int64_t>(splits, 1);
  chunk = std::max<int64_t>(ceil_div(count, splits), 1);
  splits = std::max<int64_t>(ceil_div(count, chunk), 1);
}

unsigned rows_grid(int64_t n) { return static_cast<unsigned>(n < 65536 ? (n < 1 ? 1 : n) : 65536); }

template <class T>
void layer_norm_grads(const sdk::OpCall& c, const Launch& l, int64_t rows, int64_t inner) {
  const Vec gw = vec(c.out[1]), gb = vec(c.out[2]);
  if (gw.data == nullptr && gb.data == nullptr) return;
  const int64_t tiles = ceil_div(inner, kTileX);
  int64_t splits = 1, chunk = 1;
  split(rows, tiles, int64_t{16} * kTileY, l, splits, chunk);
  Scratch partial(*l.mem, splits > 1 ? static_cast<size_t>(splits * inner) * sizeof(Sums2) : 0);
  const dim3 grid(static_cast<unsigned>(std::min<int64_t>(tiles, 1 << 20)), static_cast<unsigned>(splits));
  ln_param_grad_kernel<T><<<grid, dim3(kTileX, kTileY), 0, l.stream>>>(
      sdk::data_ptr<const T>(c.in[0]), sdk::data_ptr<const T>(c.in[1]), rows, inner, vec(c.in[2]), vec(c.in[3]), chunk,
      partial.as<Sums2>(), gw, gb);
  check_launch("layer_norm_bwd (weight / bias)");
  if (splits > 1) {
    ln_param_finish_kernel<<<grid_for(inner, l), kThreads, 0, l.stream>>>(partial.as<Sums2>(), splits, inner, gw, gb);
    check_launch("layer_norm_bwd (weight / bias, finish)");
  }
}

template <class T>
void batch_norm(const sdk::OpCall& c, const Launch& l, const Channels& ch, int64_t n) {
  const auto& a = sdk::attr<ingot_attr_batch_norm>(c.attrs);
  const bool bwd = c.op == INGOT_OP_BATCH_NORM_BWD, training = a.training != 0, aff = a.has_affine != 0;
  const T* x = sdk::data_ptr<const T>(bwd ? c.in[1] : c.in[0]);
  const T* gy = bwd ? sdk::data_ptr<const T>(c.in[0]) : nullptr;
  int64_t splits = 1, chunk = 1;
  split(ch.count, ch.channels, int64_t{16} * kThreads, l, splits, chunk);
  const bool sums = bwd || training;  // eval forward reads only the running statistics
  Scratch partial(*l.mem, sums ? static_cast<size_t>(splits * ch.channels) * sizeof(Sums2) : 0);
  Scratch coef(*l.mem, static_cast<size_t>(ch.channels) * sizeof(ChannelCoef));
  if (sums) {
    const dim3 grid(static_cast<unsigned>(splits), static_cast<unsigned>(std::min<int64_t>(ch.channels, 65535)));
    bn_sums_kernel<T>
        <<<grid, kThreads, 0, l.stream>>>(x, gy, bwd ? vec(c.in[3]) : Vec{nullptr, 0}, ch, chunk, partial.as<Sums2>());
    check_launch("batch_norm (sums)");
  }
  const unsigned per_channel = grid_for(ch.channels, l), per_value = grid_for(n, l);
  if (!bwd) {
    bn_stats_kernel<T><<<per_channel, kThreads, 0, l.stream>>>(
        x, ch, partial.as<Sums2>(), splits, training ? 1 : 0, a.eps, a.momentum, vec(c.in[1], aff), vec(c.in[2], aff),
        vec(c.in[3]), vec(c.in[4]), vec(c.out[1]), vec(c.out[2]), coef.as<ChannelCoef>());
    check_launch("batch_norm (statistics)");
    bn_apply_kernel<T>
        <<<per_value, kThreads, 0, l.stream>>>(x, sdk::data_ptr<T>(c.out[0]), ch, n, coef.as<ChannelCoef>());
    return check_launch("batch_norm");
  }
  bn_grad_stats_kernel<<<per_channel, kThreads, 0, l.stream>>>(ch, partial.as<Sums2>(), splits, vec(c.in[2], aff),
                                                               vec(c.in[3]), vec(c.in[4]), vec(c.out[1]), vec(c.out[2]),
                                                               coef.as<ChannelCoef>());
  check_launch("batch_norm_bwd (sums)");
  bn_grad_apply_kernel<T><<<per_value, kThreads, 0, l.stream>>>(gy, x, sdk::data_ptr<T>(c.out[0]), ch, n,
                                                                coef.as<ChannelCoef>(), training ? 0 : 1);
  check_launch("batch_norm_bwd");
}

}  // namespace

bool norm_supports(const sdk::OpCall& c) {
  if (c.n_in != 5 && c.n_in != 3) return false;
  if (c.n_out != 3) return false;
  const bool layer = c.op == INGOT_OP_LAYER_NORM || c.op == INGOT_OP_LAYER_NORM_BWD;
  if (layer ? !has_attr<ingot_attr_layer_norm>(c.attrs) : !has_attr<ingot_attr_batch_norm>(c.attrs)) return false;
  const bool bwd = c.op == INGOT_OP_LAYER_NORM_BWD || c.op == INGOT_OP_BATCH_NORM_BWD;
  const ingot_tensor_desc& x = bwd ? c.in[1] : c.in[0];
  if (!has_dtype(INGOT_DTYPES_FLOAT, x.dtype) || !same_dense(x, c.out[0])) return false;
  if (bwd && !same_dense(x, c.in[0])) return false;
  if (layer) {
    const auto& a = sdk::attr<ingot_attr_layer_norm>(c.attrs);
    if (a.normalized_ndim < 1 || a.normalized_ndim > x.ndim) return false;
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < x.ndim; ++d) (d < x.ndim - a.normalized_ndim ? outer : inner) *= x.shape[d];
    if (!bwd) return c.n_in == 3 && vec_ok(c.in[1], inner) && vec_ok(c.in[2], inner) && vec_ok(c.out[1], outer) && vec_ok(c.out[2], outer);
    return c.n_in == 5 && vec_ok(c.in[2], outer) && vec_ok(c.in[3], outer) && vec_ok(c.in[4], inner) &&
           vec_ok(c.out[1], inner) && vec_ok(c.out[2], inner);
  }
  if (c.n_in != 5 || x.ndim < 2) return false;
  const auto& a = sdk::attr<ingot_attr_batch_norm>(c.attrs);
  const int64_t ch = x.shape[1];
  int64_t count = x.shape[0];
  for (int d = 2; d < x.ndim; ++d) count *= x.shape[d];
  for (int i = bwd ? 2 : 1; i < 5; ++i)  // forward: weight, bias, running stats; backward: weight, mean, invstd
    if (!vec_ok(c.in[i], ch)) return false;
  if (!vec_ok(c.out[1], ch) || !vec_ok(c.out[2], ch)) return false;
  return bwd || !a.training || count > 1;
}

void norm_run(const sdk::OpCall& c, const Launch& l) {
  const bool bwd = c.op == INGOT_OP_LAYER_NORM_BWD || c.op == INGOT_OP_BATCH_NORM_BWD;
  const ingot_tensor_desc& x = bwd ? c.in[1] : c.in[0];
  const int64_t n = sdk::numel(x);
  if (n == 0) return;
  if (c.op == INGOT_OP_LAYER_NORM || c.op == INGOT_OP_LAYER_NORM_BWD) {
    const auto& a = sdk::attr<ingot_attr_layer_norm>(c.attrs);
    const bool aff = a.has_affine != 0;
    int64_t rows = 1, inner = 1;
    for (int d = 0; d < x.ndim; ++d) (d < x.ndim - a.normalized_ndim ? rows : inner) *= x.shape[d];
    if (bwd) {
      require(c.in[2], "mean");
      require(c.in[3], "rstd");
    }
    visit_float(x.dtype, "layer_norm", [&](auto tag) {
      using T = decltype(tag);
      if (!bwd) {
        layer_norm_kernel<T><<<rows_grid(rows), kThreads, 0, l.stream>>>(
            sdk::data_ptr<const T>(x), sdk::data_ptr<T>(c.out[0]), rows, inner, vec(c.in[1], aff), vec(c.in[2], aff),
            vec(c.out[1]), vec(c.out[2]), a.eps);
        return check_launch("layer_norm");
      }
      layer_norm_bwd_kernel<T><<<rows_grid(rows), kThreads, 0, l.stream>>>(
          sdk::data_ptr<const T>(c.in[0]), sdk::data_ptr<const T>(x), sdk::data_ptr<T>(c.out[0]), rows, inner,
          vec(c.in[4], aff), vec(c.in[2]), vec(c.in[3]));
      check_launch("layer_norm_bwd");
      layer_norm_grads<T>(c, l, rows, inner);
    });
    return;
  }
  if (bwd) {
    require(c.in[3], "save_mean");
    require(c.in[4], "save_invstd");
  } else if (!sdk::attr<ingot_attr_batch_norm>(c.attrs).training) {
    require(c.in[3], "running_mean (eval mode)");
    require(c.in[4], "running_var (eval mode)");
  }
  Channels ch{};
  ch.channels = x.shape[1];
  ch.spatial = 1;
  for (int d = 2; d < x.ndim; ++d) ch.spatial *= x.shape[d];
  ch.count = x.shape[0] * ch.spatial;
  ch.index32 = n < (int64_t{1} << 31) ? 1 : 0;
  ch.by_spatial = make_fast_divmod(ch.index32 ? static_cast<uint32_t>(ch.spatial) : 1u);
  ch.by_channels = make_fast_divmod(ch.index32 ? static_cast<uint32_t>(ch.channels) : 1u);
  visit_float(x.dtype, "batch_norm", [&](auto tag) { batch_norm<decltype(tag)>(c, l, ch, n); });
}

}  // namespace ingot::cuda
