// LAYER_NORM / BATCH_NORM and their backward ops on contiguous tensors, statistics in double
// (like the reference). Layer norm: one block per row; batch norm: one block per channel.
// Optional per-feature tensors (weight, bias, running stats, mean/rstd outputs) may be 0-size.
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

// Elements of group g: index(g, j) = (j / inner_len) * outer_stride + g * group_stride + j % inner_len.
struct Groups {
  int64_t count;         // elements per group
  int64_t inner_len;     // contiguous run length
  int64_t outer_stride;  // distance between runs
  int64_t group_stride;  // distance between groups
  __device__ __forceinline__ int64_t at(int64_t g, int64_t j) const {
    return (j / inner_len) * outer_stride + g * group_stride + j % inner_len;
  }
};

template <class T>
__global__ void norm_fwd_kernel(const T* x, T* y, Groups grp, int64_t n_groups, Vec w, Vec b, Vec mean_out,
                                Vec rstd_out, Vec run_mean, Vec run_var, int stats_from_running, double eps,
                                double momentum, int per_element_affine) {
  for (int64_t g = blockIdx.x; g < n_groups; g += gridDim.x) {
    double mu, rs;
    if (stats_from_running) {
      mu = vload(run_mean, g, 0.0);
      rs = 1.0 / sqrt(vload(run_var, g, 1.0) + eps);
    } else {
      double s = 0.0;
      for (int64_t j = threadIdx.x; j < grp.count; j += blockDim.x) s += cvt<double>(x[grp.at(g, j)]);
      mu = block_total(s) / static_cast<double>(grp.count);
      double sq = 0.0;
      for (int64_t j = threadIdx.x; j < grp.count; j += blockDim.x) {
        const double d = cvt<double>(x[grp.at(g, j)]) - mu;
        sq += d * d;
      }
      sq = block_total(sq);
      rs = 1.0 / sqrt(sq / static_cast<double>(grp.count) + eps);
      if (threadIdx.x == 0 && run_mean.data != nullptr) {
        vstore(run_mean, g, (1.0 - momentum) * vload(run_mean, g, 0.0) + momentum * mu);
      }
      if (threadIdx.x == 0 && run_var.data != nullptr) {
        const double unbiased = sq / static_cast<double>(grp.count - 1);
        vstore(run_var, g, (1.0 - momentum) * vload(run_var, g, 0.0) + momentum * unbiased);
      }
    }
    if (threadIdx.x == 0) {
      vstore(mean_out, g, mu);
      vstore(rstd_out, g, rs);
    }
    for (int64_t j = threadIdx.x; j < grp.count; j += blockDim.x) {
      const int64_t k = grp.at(g, j);
      const int64_t f = per_element_affine ? j : g;  // layer norm: per feature; batch norm: per channel
      double v = (cvt<double>(x[k]) - mu) * rs;
      if (per_element_affine) {
        if (w.data != nullptr) v *= vload(w, f, 1.0);
        if (b.data != nullptr) v += vload(b, f, 0.0);
      } else {
        v = v * vload(w, f, 1.0) + vload(b, f, 0.0);
      }
      y[k] = cvt<T>(v);
    }
  }
}

// gx = scale * (g - mean(g) - xhat * mean(g * xhat)) (batch statistics) or scale * g (running);
// per group it also writes sum(gy * xhat) and sum(gy) (batch norm's grad_weight / grad_bias).
template <class T>
__global__ void norm_bwd_kernel(const T* gy, const T* x, T* gx, Groups grp, int64_t n_groups, Vec w, Vec mean, Vec rstd,
                                int per_element_affine, int constant_stats, Vec gw_group, Vec gb_group) {
  for (int64_t g = blockIdx.x; g < n_groups; g += gridDim.x) {
    const double mu = vload(mean, g, 0.0), rs = vload(rstd, g, 1.0);
    double sg = 0.0, sgx = 0.0, sgy = 0.0, sgyx = 0.0;
    for (int64_t j = threadIdx.x; j < grp.count; j += blockDim.x) {
      const int64_t k = grp.at(g, j);
      const double xhat = (cvt<double>(x[k]) - mu) * rs, d = cvt<double>(gy[k]);
      const double gv = per_element_affine ? d * vload(w, j, 1.0) : d;
      sg += gv, sgx += gv * xhat, sgy += d, sgyx += d * xhat;
    }
    sg = block_total(sg), sgx = block_total(sgx), sgy = block_total(sgy), sgyx = block_total(sgyx);
    if (threadIdx.x == 0) {
      vstore(gw_group, g, sgyx);
      vstore(gb_group, g, sgy);
    }
    const double inv_n = grp.count > 0 ? 1.0 / static_cast<double>(grp.count) : 0.0;
    for (int64_t j = threadIdx.x; j < grp.count; j += blockDim.x) {
      const int64_t k = grp.at(g, j);
      const double d = cvt<double>(gy[k]);
      if (per_element_affine) {
        const double xhat = (cvt<double>(x[k]) - mu) * rs;
        gx[k] = cvt<T>(rs * (d * vload(w, j, 1.0) - sg * inv_n - xhat * sgx * inv_n));
      } else {
        const double scale = rs * vload(w, g, 1.0);
        const double xhat = (cvt<double>(x[k]) - mu) * rs;
        gx[k] = cvt<T>(constant_stats ? scale * d : scale * (d - sgy * inv_n - xhat * sgyx * inv_n));
      }
    }
  }
}

// Layer norm's grad_weight / grad_bias: one thread per feature, summing over rows.
template <class T>
__global__ void ln_param_grad_kernel(const T* gy, const T* x, int64_t rows, int64_t inner, Vec mean, Vec rstd, Vec gw,
                                     Vec gb) {
  INGOT_GRID_STRIDE(j, inner) {
    double sw = 0.0, sb = 0.0;
    for (int64_t i = 0; i < rows; ++i) {
      const double d = cvt<double>(gy[i * inner + j]);
      sw += d * (cvt<double>(x[i * inner + j]) - vload(mean, i, 0.0)) * vload(rstd, i, 1.0);
      sb += d;
    }
    vstore(gw, j, sw);
    vstore(gb, j, sb);
  }
}

// At run time: an absent optional tensor (undefined: no data; or 0-size).
bool absent(const ingot_tensor_desc& d) { return d.data == nullptr || sdk::numel(d) == 0; }

// supports() must not depend on data pointers (core may ask before allocating), so it accepts
// what may be absent by shape alone: 0-size, or 0-dim (how an undefined tensor is described).
bool vec_ok(const ingot_tensor_desc& d, int64_t count) {
  if (sdk::numel(d) == 0 || d.ndim == 0) return true;
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

unsigned groups_grid(int64_t n) { return static_cast<unsigned>(n < 65536 ? (n < 1 ? 1 : n) : 65536); }

}  // namespace

bool norm_supports(const sdk::OpCall& c) {
  if (c.n_in != 5 && c.n_in != 3) return false;
  if (c.n_out != 3 || c.attrs == nullptr) return false;
  const bool bwd = c.op == INGOT_OP_LAYER_NORM_BWD || c.op == INGOT_OP_BATCH_NORM_BWD;
  const ingot_tensor_desc& x = bwd ? c.in[1] : c.in[0];
  if (!has_dtype(INGOT_DTYPES_FLOAT, x.dtype) || !same_dense(x, c.out[0])) return false;
  if (bwd && !same_dense(x, c.in[0])) return false;
  if (c.op == INGOT_OP_LAYER_NORM || c.op == INGOT_OP_LAYER_NORM_BWD) {
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
  for (int i = 1; i < 5; ++i)
    if (!vec_ok(c.in[i], ch)) return false;
  if (!vec_ok(c.out[1], ch) || !vec_ok(c.out[2], ch)) return false;
  return bwd || !a.training || count > 1;
}

void norm_run(const sdk::OpCall& c, const Launch& l) {
  const bool bwd = c.op == INGOT_OP_LAYER_NORM_BWD || c.op == INGOT_OP_BATCH_NORM_BWD;
  const ingot_tensor_desc& x = bwd ? c.in[1] : c.in[0];
  if (sdk::numel(x) == 0) return;
  Groups grp{};
  int64_t n_groups = 0;
  const bool layer = c.op == INGOT_OP_LAYER_NORM || c.op == INGOT_OP_LAYER_NORM_BWD;
  if (layer) {
    const auto& a = sdk::attr<ingot_attr_layer_norm>(c.attrs);
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < x.ndim; ++d) (d < x.ndim - a.normalized_ndim ? outer : inner) *= x.shape[d];
    grp = Groups{inner, inner, 0, inner};
    n_groups = outer;
  } else {
    int64_t spatial = 1;
    for (int d = 2; d < x.ndim; ++d) spatial *= x.shape[d];
    grp = Groups{x.shape[0] * spatial, spatial, x.shape[1] * spatial, spatial};
    n_groups = x.shape[1];
  }
  if (c.op == INGOT_OP_LAYER_NORM_BWD || c.op == INGOT_OP_BATCH_NORM_BWD) {
    require(c.in[2 + (layer ? 0 : 1)], "mean");
    require(c.in[3 + (layer ? 0 : 1)], "rstd / invstd");
  } else if (c.op == INGOT_OP_BATCH_NORM && !sdk::attr<ingot_attr_batch_norm>(c.attrs).training) {
    require(c.in[3], "running_mean (eval mode)");
    require(c.in[4], "running_var (eval mode)");
  }
  const unsigned grid = groups_grid(n_groups);
  visit_float(x.dtype, "norm", [&](auto tag) {
    using T = decltype(tag);
    if (c.op == INGOT_OP_LAYER_NORM) {
      const auto& a = sdk::attr<ingot_attr_layer_norm>(c.attrs);
      const bool aff = a.has_affine != 0;
      norm_fwd_kernel<T><<<grid, kThreads, 0, l.stream>>>(sdk::data_ptr<const T>(x), sdk::data_ptr<T>(c.out[0]), grp,
                                                          n_groups, vec(c.in[1], aff), vec(c.in[2], aff), vec(c.out[1]),
                                                          vec(c.out[2]), Vec{nullptr, 0}, Vec{nullptr, 0}, 0, a.eps, 0.0, 1);
    } else if (c.op == INGOT_OP_BATCH_NORM) {
      const auto& a = sdk::attr<ingot_attr_batch_norm>(c.attrs);
      const bool aff = a.has_affine != 0;
      norm_fwd_kernel<T><<<grid, kThreads, 0, l.stream>>>(sdk::data_ptr<const T>(x), sdk::data_ptr<T>(c.out[0]), grp,
                                                          n_groups, vec(c.in[1], aff), vec(c.in[2], aff), vec(c.out[1]),
                                                          vec(c.out[2]), vec(c.in[3]), vec(c.in[4]), a.training ? 0 : 1,
                                                          a.eps, a.momentum, 0);
    } else if (c.op == INGOT_OP_LAYER_NORM_BWD) {
      const auto& a = sdk::attr<ingot_attr_layer_norm>(c.attrs);
      const T* gy = sdk::data_ptr<const T>(c.in[0]);
      norm_bwd_kernel<T><<<grid, kThreads, 0, l.stream>>>(gy, sdk::data_ptr<const T>(x), sdk::data_ptr<T>(c.out[0]), grp,
                                                          n_groups, vec(c.in[4], a.has_affine != 0), vec(c.in[2]),
                                                          vec(c.in[3]), 1, 0, Vec{nullptr, 0}, Vec{nullptr, 0});
      if (!absent(c.out[1]) || !absent(c.out[2]))
        ln_param_grad_kernel<T><<<grid_for(grp.count, l), kThreads, 0, l.stream>>>(
            gy, sdk::data_ptr<const T>(x), n_groups, grp.count, vec(c.in[2]), vec(c.in[3]), vec(c.out[1]), vec(c.out[2]));
    } else {
      const auto& a = sdk::attr<ingot_attr_batch_norm>(c.attrs);
      norm_bwd_kernel<T><<<grid, kThreads, 0, l.stream>>>(
          sdk::data_ptr<const T>(c.in[0]), sdk::data_ptr<const T>(x), sdk::data_ptr<T>(c.out[0]), grp, n_groups,
          vec(c.in[2], a.has_affine != 0), vec(c.in[3]), vec(c.in[4]), 0, a.training ? 0 : 1, vec(c.out[1]), vec(c.out[2]));
    }
  });
  check_launch("norm");
}

}  // namespace ingot::cuda
