// SCALED_DOT_PRODUCT_ATTENTION and its backward, FlashAttention-2 style (op_table.def defines them):
// forward tiles the queries of each (batch, head) with an online softmax over key tiles in shared
// memory; backward recomputes P from lse, then dK / dV per key tile and dQ per query tile (no
// atomics: deterministic). f32 / f16 / bf16 in any strides, f32 sums, D and Dv up to 128.
#include <algorithm>
#include <cmath>
#include <string>

#include "ingot/plugin/philox.h"
#include "k_common.cuh"

namespace ingot::cuda {
namespace {

constexpr int kTile = 32;  // queries and keys per tile: a warp's lanes run along one of the two
constexpr int kWarps = 4;
constexpr int kRows = kTile / kWarps;  // tile rows per warp
constexpr int kBlock = kWarps * 32;
constexpr int kMaxHead = 128;  // D and Dv: at most kMaxHead / 32 accumulator columns per lane

/// A strided [B, H, T, C] operand (lse: [B, H, T] with C = 0).
template <class T>
struct View {
  T* p;
  int64_t s[4];
  __device__ __forceinline__ T& at(int64_t b, int64_t h, int64_t t, int64_t c) const {
    return p[b * s[0] + h * s[1] + t * s[2] + c * s[3]];
  }
};

template <class T>
struct Args {
  int64_t b, h, tq, tk;
  int d, dv;
  float scale;
  bool causal;
  int64_t shift;  ///< causal: key j is visible to query i iff j <= i + shift
  int32_t mask;   ///< 0 none, 1 bool (nonzero = attend), 2 additive in T
  const void* m;
  int64_t ms[4];  ///< the mask's strides, 0 along its broadcast dims
  bool dropout;
  double keep_p;  ///< 1 - dropout_p, compared in double as philox_bernoulli does
  float keep_scale;
  uint64_t seed, offset;
  View<const T> q, k, v, o, go;
  View<float> lse;  ///< written by forward, read by backward
  View<T> out, gq, gk, gv;
  float* delta;  ///< backward: rowsum(dO * O), dense [B * H * Tq]
};

__device__ __forceinline__ float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

/// The score of query i and key j from their dot product: scaled, plus an additive mask's term;
/// -inf where the causal rule or a false bool mask hides the key, and outside the problem.
template <class T>
__device__ __forceinline__ float score(const Args<T>& a, int64_t b, int64_t h, int64_t i, int64_t j, float dot) {
  if (i >= a.tq || j >= a.tk || (a.causal && j > i + a.shift)) return -INFINITY;
  if (a.mask == 0) return dot * a.scale;
  const int64_t off = b * a.ms[0] + h * a.ms[1] + i * a.ms[2] + j * a.ms[3];
  if (a.mask == 1) return static_cast<const uint8_t*>(a.m)[off] != 0 ? dot * a.scale : -INFINITY;
  return dot * a.scale + cvt<float>(static_cast<const T*>(a.m)[off]);
}

/// The dropout factor of (i, j): 1 / (1 - p) where the reference's Bernoulli draw keeps it, else 0.
/// Dropout is implemented, not declined: value (bh * Tq + i) * Tk + j of the Philox stream (seed,
/// offset), the row-major index of [B, H, Tq, Tk] that reference/attention.cpp draws, so the same
/// probabilities are kept on both backends, and backward draws them again.
template <class T>
__device__ __forceinline__ float keep_factor(const Args<T>& a, int64_t bh, int64_t i, int64_t j) {
  if (!a.dropout) return 1.f;
  const auto n = static_cast<uint64_t>((bh * a.tq + i) * a.tk + j);
  const sdk::PhiloxBlock block = sdk::philox_block(a.seed, a.offset + n / 4);
  return sdk::philox_bernoulli(block.v[n % 4], a.keep_p) ? a.keep_scale : 0.f;
}

/// dst[r * ld + c] = t[b, h, t0 + r, c] in float for the kTile rows of a tile (0 from row `end` on).
template <class T>
__device__ __forceinline__ void load_tile(float* dst, int ld, const View<const T>& t, int64_t b, int64_t h, int64_t t0,
                                          int64_t end, int width) {
  for (int e = threadIdx.x; e < kTile * width; e += kBlock) {
    const int r = e / width, c = e % width;
    dst[r * ld + c] = t0 + r < end ? cvt<float>(t.at(b, h, t0 + r, c)) : 0.f;
  }
}

/// The keys a tile of queries from i0 can see: [0, key_end).
template <class T>
__device__ __forceinline__ int64_t key_end(const Args<T>& a, int64_t i0) {
  if (!a.causal) return a.tk;
  const int64_t e = i0 + kTile + a.shift;
  return e < 0 ? 0 : (e > a.tk ? a.tk : e);
}

// ---- forward: warp w owns queries i0 + 8w .. +8 of the tile, lane = key of the key tile, and
// output columns lane, lane + 32, ... ----

template <class T, int NC>
__global__ void __launch_bounds__(kBlock) attention_fwd_kernel(Args<T> a, int64_t q_tiles) {
  extern __shared__ float smem[];
  const int d = a.d, dv = a.dv;
  float* qs = smem;                  // [kTile][d]: rows read whole by a warp (broadcast)
  float* ks = qs + kTile * d;        // [kTile][d + 1]: a key per lane, padded against bank conflicts
  float* vs = ks + kTile * (d + 1);  // [kTile][dv]
  float* ps = vs + kTile * dv;       // [kTile][kTile]: probabilities times the keep factor
  const int64_t bh = blockIdx.x / q_tiles, i0 = blockIdx.x % q_tiles * kTile, b = bh / a.h, h = bh % a.h;
  const int lane = threadIdx.x % 32, r0 = threadIdx.x / 32 * kRows;
  load_tile(qs, d, a.q, b, h, i0, a.tq, d);
  float m[kRows], l[kRows], acc[kRows][NC];
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    m[r] = -INFINITY, l[r] = 0.f;
#pragma unroll
    for (int k = 0; k < NC; ++k) acc[r][k] = 0.f;
  }
  const int64_t j_end = key_end(a, i0);
  for (int64_t j0 = 0; j0 < j_end; j0 += kTile) {
    __syncthreads();  // the previous tiles of K and V are read
    load_tile(ks, d + 1, a.k, b, h, j0, a.tk, d);
    load_tile(vs, dv, a.v, b, h, j0, a.tk, dv);
    __syncthreads();
    float s[kRows] = {};
    for (int c = 0; c < d; ++c) {
      const float kc = ks[lane * (d + 1) + c];
#pragma unroll
      for (int r = 0; r < kRows; ++r) s[r] += qs[(r0 + r) * d + c] * kc;
    }
    const int64_t j = j0 + lane;
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      const int64_t i = i0 + r0 + r;
      const float x = score(a, b, h, i, j, s[r]);
      const float m_new = fmaxf(m[r], warp_max(x));
      const float m_use = m_new == -INFINITY ? 0.f : m_new;  // no visible key yet: every exp is 0
      const float e = expf(x - m_use), alpha = expf(m[r] - m_use);
      l[r] = l[r] * alpha + warp_sum(e);  // lse counts dropped probabilities too
      m[r] = m_new;
#pragma unroll
      for (int k = 0; k < NC; ++k) acc[r][k] *= alpha;
      ps[(r0 + r) * kTile + lane] = e != 0.f ? e * keep_factor(a, bh, i, j) : 0.f;
    }
    __syncwarp();  // a warp reads only its own rows of ps
    const int jn = static_cast<int>(j_end - j0 < kTile ? j_end - j0 : kTile);
    for (int jj = 0; jj < jn; ++jj) {
      float vj[NC];
#pragma unroll
      for (int k = 0; k < NC; ++k) vj[k] = lane + 32 * k < dv ? vs[jj * dv + lane + 32 * k] : 0.f;
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        const float p = ps[(r0 + r) * kTile + jj];
#pragma unroll
        for (int k = 0; k < NC; ++k) acc[r][k] += p * vj[k];
      }
    }
  }
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const int64_t i = i0 + r0 + r;
    if (i >= a.tq) continue;
    const float inv = l[r] > 0.f ? 1.f / l[r] : 0.f;  // a row without a visible key: o = 0, lse = -inf
#pragma unroll
    for (int k = 0; k < NC; ++k)
      if (lane + 32 * k < dv) a.out.at(b, h, i, lane + 32 * k) = cvt<T>(acc[r][k] * inv);
    if (lane == 0) a.lse.at(b, h, i, 0) = l[r] > 0.f ? m[r] + logf(l[r]) : -INFINITY;
  }
}

// ---- backward ----

/// delta[row] = sum_c dO[row, c] O[row, c]: a warp per row.
template <class T>
__global__ void attention_delta_kernel(Args<T> a, int64_t rows) {
  const int64_t warps = gridDim.x * static_cast<int64_t>(blockDim.x) / 32;
  for (int64_t row = (blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x) / 32; row < rows; row += warps) {
    const int64_t bh = row / a.tq, i = row % a.tq, b = bh / a.h, h = bh % a.h;
    float s = 0.f;
    for (int c = threadIdx.x % 32; c < a.dv; c += 32)
      s += cvt<float>(a.go.at(b, h, i, c)) * cvt<float>(a.o.at(b, h, i, c));
    s = warp_sum(s);
    if (threadIdx.x % 32 == 0) a.delta[row] = s;
  }
}

/// p_ij = exp(s_ij - lse_i) (0 when hidden or the row sees nothing), its keep factor f and
/// dS_ij = p_ij (dP_ij f - delta_i) scale; returns p_ij f.
template <class T>
__device__ __forceinline__ float grad_scores(const Args<T>& a, int64_t b, int64_t h, int64_t bh, int64_t i, int64_t j,
                                             float dot, float dp, float lse, float delta, float& ds) {
  const float x = score(a, b, h, i, j, dot);
  const float p = x == -INFINITY || lse == -INFINITY ? 0.f : expf(x - lse);
  const float f = p != 0.f ? keep_factor(a, bh, i, j) : 0.f;
  ds = p * (dp * f - delta) * a.scale;
  return p * f;
}

/// dK and dV of a tile of 32 keys over every query tile that sees it: warp w owns keys j0 + 8w
/// .. +8, lane = query of the query tile, and gradient columns lane, lane + 32, ...
template <class T, int NC>
__global__ void __launch_bounds__(kBlock) attention_dkdv_kernel(Args<T> a, int64_t k_tiles) {
  extern __shared__ float smem[];
  const int d = a.d, dv = a.dv;
  float* ks = smem;                    // [kTile][d]: the block's keys, read by row
  float* vs = ks + kTile * d;          // [kTile][dv]
  float* qs = vs + kTile * dv;         // [kTile][d + 1]: a query per lane
  float* gos = qs + kTile * (d + 1);   // [kTile][dv + 1]
  float* ps = gos + kTile * (dv + 1);  // [kTile keys][kTile queries]: p * keep
  float* dss = ps + kTile * kTile;     // [kTile keys][kTile queries]: dS
  float* lse_s = dss + kTile * kTile;  // [kTile]
  float* delta_s = lse_s + kTile;      // [kTile]
  const int64_t bh = blockIdx.x / k_tiles, j0 = blockIdx.x % k_tiles * kTile, b = bh / a.h, h = bh % a.h;
  const int lane = threadIdx.x % 32, r0 = threadIdx.x / 32 * kRows;
  load_tile(ks, d, a.k, b, h, j0, a.tk, d);
  load_tile(vs, dv, a.v, b, h, j0, a.tk, dv);
  float gk[kRows][NC] = {}, gv[kRows][NC] = {};
  const int64_t i_first = a.causal && j0 - a.shift > 0 ? j0 - a.shift : 0;  // the first query that sees key j0
  for (int64_t i0 = i_first / kTile * kTile; i0 < a.tq; i0 += kTile) {
    __syncthreads();  // the previous query tile is read
    load_tile(qs, d + 1, a.q, b, h, i0, a.tq, d);
    load_tile(gos, dv + 1, a.go, b, h, i0, a.tq, dv);
    if (threadIdx.x < kTile) {
      const int64_t i = i0 + threadIdx.x;
      lse_s[threadIdx.x] = i < a.tq ? a.lse.at(b, h, i, 0) : -INFINITY;
      delta_s[threadIdx.x] = i < a.tq ? a.delta[bh * a.tq + i] : 0.f;
    }
    __syncthreads();
    float s[kRows] = {}, dp[kRows] = {};
    for (int c = 0; c < d; ++c) {
      const float qc = qs[lane * (d + 1) + c];
#pragma unroll
      for (int r = 0; r < kRows; ++r) s[r] += ks[(r0 + r) * d + c] * qc;
    }
    for (int c = 0; c < dv; ++c) {
      const float gc = gos[lane * (dv + 1) + c];
#pragma unroll
      for (int r = 0; r < kRows; ++r) dp[r] += vs[(r0 + r) * dv + c] * gc;
    }
    const int64_t i = i0 + lane;
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      float ds;
      ps[(r0 + r) * kTile + lane] =
          grad_scores(a, b, h, bh, i, j0 + r0 + r, s[r], dp[r], lse_s[lane], delta_s[lane], ds);
      dss[(r0 + r) * kTile + lane] = ds;
    }
    __syncwarp();  // a warp reads only its own rows of ps and dss
    for (int ii = 0; ii < kTile; ++ii) {
      float qv[NC], gov[NC];
#pragma unroll
      for (int k = 0; k < NC; ++k) {
        const int c = lane + 32 * k;
        qv[k] = c < d ? qs[ii * (d + 1) + c] : 0.f;
        gov[k] = c < dv ? gos[ii * (dv + 1) + c] : 0.f;
      }
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        const float pf = ps[(r0 + r) * kTile + ii], ds = dss[(r0 + r) * kTile + ii];
#pragma unroll
        for (int k = 0; k < NC; ++k) {
          gv[r][k] += pf * gov[k];
          gk[r][k] += ds * qv[k];
        }
      }
    }
  }
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const int64_t j = j0 + r0 + r;
    if (j >= a.tk) continue;
#pragma unroll
    for (int k = 0; k < NC; ++k) {
      const int c = lane + 32 * k;
      if (c < d) a.gk.at(b, h, j, c) = cvt<T>(gk[r][k]);
      if (c < dv) a.gv.at(b, h, j, c) = cvt<T>(gv[r][k]);
    }
  }
}

/// dQ of a tile of 32 queries over the key tiles it sees: warp w owns queries i0 + 8w .. +8,
/// lane = key of the key tile, and gradient columns lane, lane + 32, ...
template <class T, int NC>
__global__ void __launch_bounds__(kBlock) attention_dq_kernel(Args<T> a, int64_t q_tiles) {
  extern __shared__ float smem[];
  const int d = a.d, dv = a.dv;
  float* qs = smem;                    // [kTile][d]: the block's queries, read by row
  float* gos = qs + kTile * d;         // [kTile][dv]
  float* ks = gos + kTile * dv;        // [kTile][d + 1]: a key per lane
  float* vs = ks + kTile * (d + 1);    // [kTile][dv + 1]
  float* dss = vs + kTile * (dv + 1);  // [kTile queries][kTile keys]
  const int64_t bh = blockIdx.x / q_tiles, i0 = blockIdx.x % q_tiles * kTile, b = bh / a.h, h = bh % a.h;
  const int lane = threadIdx.x % 32, r0 = threadIdx.x / 32 * kRows;
  load_tile(qs, d, a.q, b, h, i0, a.tq, d);
  load_tile(gos, dv, a.go, b, h, i0, a.tq, dv);
  float lse[kRows], delta[kRows], gq[kRows][NC] = {};
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const int64_t i = i0 + r0 + r;
    lse[r] = i < a.tq ? a.lse.at(b, h, i, 0) : -INFINITY;
    delta[r] = i < a.tq ? a.delta[bh * a.tq + i] : 0.f;
  }
  const int64_t j_end = key_end(a, i0);
  for (int64_t j0 = 0; j0 < j_end; j0 += kTile) {
    __syncthreads();  // the previous key tile is read
    load_tile(ks, d + 1, a.k, b, h, j0, a.tk, d);
    load_tile(vs, dv + 1, a.v, b, h, j0, a.tk, dv);
    __syncthreads();
    float s[kRows] = {}, dp[kRows] = {};
    for (int c = 0; c < d; ++c) {
      const float kc = ks[lane * (d + 1) + c];
#pragma unroll
      for (int r = 0; r < kRows; ++r) s[r] += qs[(r0 + r) * d + c] * kc;
    }
    for (int c = 0; c < dv; ++c) {
      const float vc = vs[lane * (dv + 1) + c];
#pragma unroll
      for (int r = 0; r < kRows; ++r) dp[r] += gos[(r0 + r) * dv + c] * vc;
    }
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      float ds;
      (void)grad_scores(a, b, h, bh, i0 + r0 + r, j0 + lane, s[r], dp[r], lse[r], delta[r], ds);
      dss[(r0 + r) * kTile + lane] = ds;
    }
    __syncwarp();
    const int jn = static_cast<int>(j_end - j0 < kTile ? j_end - j0 : kTile);
    for (int jj = 0; jj < jn; ++jj) {
      float kv[NC];
#pragma unroll
      for (int k = 0; k < NC; ++k) kv[k] = lane + 32 * k < d ? ks[jj * (d + 1) + lane + 32 * k] : 0.f;
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        const float ds = dss[(r0 + r) * kTile + jj];
#pragma unroll
        for (int k = 0; k < NC; ++k) gq[r][k] += ds * kv[k];
      }
    }
  }
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const int64_t i = i0 + r0 + r;
    if (i >= a.tq) continue;
#pragma unroll
    for (int k = 0; k < NC; ++k)
      if (lane + 32 * k < d) a.gq.at(b, h, i, lane + 32 * k) = cvt<T>(gq[r][k]);
  }
}

// ---- host side ----

bool has_shape(const ingot_tensor_desc& t, int32_t dtype, int ndim, const int64_t* shape) {
  if (t.dtype != dtype || t.ndim != ndim) return false;
  for (int i = 0; i < ndim; ++i)
    if (t.shape[i] != shape[i]) return false;
  return true;
}

template <class T>
View<T> view(const ingot_tensor_desc& t) {
  View<T> v{sdk::data_ptr<T>(t), {0, 0, 0, 0}};
  for (int i = 0; i < t.ndim; ++i) v.s[i] = t.strides[i];
  return v;
}

int64_t tiles(int64_t n) { return (n + kTile - 1) / kTile; }

template <class T>
Args<T> make_args(const sdk::OpCall& c, const ingot_attr_attention& at, bool bwd) {
  const int first = bwd ? 1 : 0;
  const ingot_tensor_desc &q = c.in[first], &k = c.in[first + 1], &v = c.in[first + 2];
  Args<T> a{};
  a.b = q.shape[0], a.h = q.shape[1], a.tq = q.shape[2], a.tk = k.shape[2];
  a.d = static_cast<int>(q.shape[3]), a.dv = static_cast<int>(v.shape[3]);
  a.scale = static_cast<float>(at.scale);
  a.causal = at.causal != 0;
  a.shift = at.causal == 2 ? a.tk - a.tq : 0;
  a.mask = at.mask;
  if (at.mask != 0) {
    const ingot_tensor_desc& m = c.in[c.n_in - 1];
    a.m = sdk::data_ptr(m);
    for (int i = 0; i < 4; ++i) a.ms[i] = m.shape[i] == 1 ? 0 : m.strides[i];
  }
  a.dropout = at.dropout_p > 0.0;
  a.keep_p = 1.0 - at.dropout_p;
  a.keep_scale = static_cast<float>(1.0 / a.keep_p);
  a.seed = at.seed, a.offset = at.offset;
  a.q = view<const T>(q), a.k = view<const T>(k), a.v = view<const T>(v);
  if (!bwd) {
    a.out = view<T>(c.out[0]);
    a.lse = view<float>(c.out[1]);
  } else {
    a.go = view<const T>(c.in[0]), a.o = view<const T>(c.in[4]);
    a.lse = view<float>(c.in[5]);
    a.gq = view<T>(c.out[0]), a.gk = view<T>(c.out[1]), a.gv = view<T>(c.out[2]);
  }
  return a;
}

/// Launches a tile kernel on `blocks` blocks with `floats` floats of dynamic shared memory (above
/// 48 KiB only once the kernel is allowed to: 74 KiB at most, within sm_80's 163 KiB).
template <class T>
void launch_tiles(void (*kernel)(Args<T>, int64_t), const Args<T>& a, int64_t n_tiles, int64_t floats, const Launch& l,
                  const char* name) {
  const int64_t blocks = a.b * a.h * n_tiles;
  if (blocks == 0) return;
  const auto bytes = static_cast<size_t>(floats) * sizeof(float);
  if (bytes > 48 * 1024) {
    const cudaError_t e =
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
    if (e != cudaSuccess)
      throw sdk::Failure(INGOT_ERR_RUNTIME, std::string("cuda: ") + name + ": cudaFuncSetAttribute failed: " +
                                                cudaGetErrorName(e) + ": " + cudaGetErrorString(e));
  }
  kernel<<<static_cast<unsigned>(blocks), kBlock, bytes, l.stream>>>(a, n_tiles);
  check_launch(name);
}

template <class T, int NC>
void run_typed(const sdk::OpCall& c, const ingot_attr_attention& at, bool bwd, const Launch& l) {
  Args<T> a = make_args<T>(c, at, bwd);
  const int64_t d = a.d, dv = a.dv, padded = kTile * (d + 1 + dv + 1 + d + dv);
  if (!bwd) {
    launch_tiles<T>(attention_fwd_kernel<T, NC>, a, tiles(a.tq), kTile * (d + d + 1 + dv + kTile), l, "attention");
    return;
  }
  const int64_t rows = a.b * a.h * a.tq;
  Scratch delta(*l.mem, static_cast<size_t>(rows) * sizeof(float));
  a.delta = delta.as<float>();
  if (rows > 0) {
    attention_delta_kernel<T><<<grid_for(rows * 32, l), kThreads, 0, l.stream>>>(a, rows);
    check_launch("attention_bwd (delta)");
  }
  launch_tiles<T>(attention_dkdv_kernel<T, NC>, a, tiles(a.tk), padded + 2 * kTile * kTile + 2 * kTile, l,
                  "attention_bwd (dk, dv)");
  launch_tiles<T>(attention_dq_kernel<T, NC>, a, tiles(a.tq), padded + kTile * kTile, l, "attention_bwd (dq)");
}

template <class T>
void run_dtype(const sdk::OpCall& c, const ingot_attr_attention& at, bool bwd, const Launch& l, int64_t head) {
  if (head <= 32) return run_typed<T, 1>(c, at, bwd, l);
  if (head <= 64) return run_typed<T, 2>(c, at, bwd, l);
  return run_typed<T, 4>(c, at, bwd, l);
}

}  // namespace

// Claimed: f32, f16 and bf16 q / k / v (grad_o, o and an additive mask in the same dtype, lse f32)
// in any strides, D and Dv in [1, 128], both causal alignments, bool and additive masks that
// broadcast, any dropout_p in [0, 1). Declined, so core runs them on the reference: f64, D or Dv
// over 128 (or 0), lse in another shape or dtype, tensors off this device.
bool attention_supports(const sdk::OpCall& c) {
  const bool bwd = c.op == INGOT_OP_SCALED_DOT_PRODUCT_ATTENTION_BWD;
  if ((!bwd && c.op != INGOT_OP_SCALED_DOT_PRODUCT_ATTENTION) || !all_device_strided(c) ||
      !has_attr<ingot_attr_attention>(c.attrs))
    return false;
  const auto& at = sdk::attr<ingot_attr_attention>(c.attrs);
  if (at.causal < 0 || at.causal > 2 || at.mask < 0 || at.mask > 2 || !(at.dropout_p >= 0.0 && at.dropout_p < 1.0))
    return false;
  if (c.n_in != (bwd ? 6 : 3) + (at.mask != 0 ? 1 : 0) || c.n_out != (bwd ? 3 : 2)) return false;
  const int first = bwd ? 1 : 0;
  const ingot_tensor_desc &q = c.in[first], &k = c.in[first + 1], &v = c.in[first + 2];
  const int32_t dt = q.dtype;
  if ((dt != INGOT_F32 && dt != INGOT_F16 && dt != INGOT_BF16) || q.ndim != 4 || k.ndim != 4 || v.ndim != 4)
    return false;
  const int64_t bsz = q.shape[0], heads = q.shape[1], tq = q.shape[2], tk = k.shape[2], d = q.shape[3], dv = v.shape[3];
  if (d < 1 || d > kMaxHead || dv < 1 || dv > kMaxHead) return false;
  const int64_t ks[4] = {bsz, heads, tk, d}, vs[4] = {bsz, heads, tk, dv}, os[4] = {bsz, heads, tq, dv},
                rows[3] = {bsz, heads, tq};
  if (!has_shape(k, dt, 4, ks) || !has_shape(v, dt, 4, vs)) return false;
  // one block per (b, h, tile): the grid's x dim holds them all
  if (bsz * heads * tiles(tq > tk ? tq : tk) > INT32_MAX) return false;
  if (at.mask != 0) {
    const ingot_tensor_desc& m = c.in[c.n_in - 1];
    if (m.dtype != (at.mask == 1 ? INGOT_BOOL : dt) || m.ndim != 4) return false;
    const int64_t full[4] = {bsz, heads, tq, tk};
    for (int i = 0; i < 4; ++i)
      if (m.shape[i] != full[i] && m.shape[i] != 1) return false;
  }
  if (!bwd) return has_shape(c.out[0], dt, 4, os) && has_shape(c.out[1], INGOT_F32, 3, rows);
  return has_shape(c.in[0], dt, 4, os) && has_shape(c.in[4], dt, 4, os) && has_shape(c.in[5], INGOT_F32, 3, rows) &&
         has_shape(c.out[0], dt, 4, q.shape) && has_shape(c.out[1], dt, 4, ks) && has_shape(c.out[2], dt, 4, vs);
}

void attention_run(const sdk::OpCall& c, const Launch& l) {
  const auto& at = sdk::attr<ingot_attr_attention>(c.attrs);
  const bool bwd = c.op == INGOT_OP_SCALED_DOT_PRODUCT_ATTENTION_BWD;
  const ingot_tensor_desc& q = c.in[bwd ? 1 : 0];
  const int64_t head = std::max(q.shape[3], c.in[bwd ? 3 : 2].shape[3]);
  switch (q.dtype) {
    case INGOT_F32:
      return run_dtype<float>(c, at, bwd, l, head);
    case INGOT_F16:
      return run_dtype<half>(c, at, bwd, l, head);
    case INGOT_BF16:
      return run_dtype<bf16>(c, at, bwd, l, head);
    default:
      throw sdk::Failure(INGOT_ERR_UNSUPPORTED, std::string("cuda attention: ") + sdk::dtype_label(q.dtype) +
                                                    " is not supported (f32, f16, bf16)");
  }
}

}  // namespace ingot::cuda
