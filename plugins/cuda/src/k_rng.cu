// Philox random ops (UNIFORM, BERNOULLI, NORMAL, DROPOUT) through ingot/plugin/philox.h, whose
// functions are __host__ __device__ under nvcc: uniform, Bernoulli and dropout masks are
// bit-identical to the CPU backends; normal differs by the ulps of CUDA's logf/cosf/sinf.
#include "ingot/plugin/philox.h"
#include "k_common.cuh"

namespace ingot::cuda {
namespace {

// One thread per Philox counter: the four lanes of block j are values 4j .. 4j+3.
template <class T>
__global__ void random_kernel(int32_t op, T* out, Indexer<1> ix, int64_t n, uint64_t seed, uint64_t offset, double a,
                              double b) {
  int64_t off[1];
  const int64_t blocks = (n + 3) / 4;
  INGOT_GRID_STRIDE(j, blocks) {
    const sdk::PhiloxBlock block = sdk::philox_block(seed, offset + static_cast<uint64_t>(j));
    for (unsigned lane = 0; lane < 4; ++lane) {
      const int64_t i = 4 * j + lane;
      if (i >= n) break;
      ix.offsets(i, off);
      const uint32_t x = block.v[lane];
      if (op == INGOT_OP_BERNOULLI) {
        out[off[0]] = cvt<T>(sdk::philox_bernoulli(x, a));
      } else if constexpr (std::is_same_v<T, double>) {
        out[off[0]] = op == INGOT_OP_UNIFORM ? sdk::philox_uniform_double(x, a, b)
                                             : __dadd_rn(a, __dmul_rn(b, sdk::philox_normal_double(block, lane)));
      } else if constexpr (std::is_floating_point_v<T> || is_half_v<T>) {
        const float v = op == INGOT_OP_UNIFORM
                            ? sdk::philox_uniform_float(x, static_cast<float>(a), static_cast<float>(b))
                            : __fadd_rn(static_cast<float>(a), __fmul_rn(static_cast<float>(b), sdk::philox_normal_float(block, lane)));
        out[off[0]] = cvt<T>(v);
      }
    }
  }
}

template <class T>
__global__ void dropout_kernel(T* y, bool* keep, const T* x, Indexer<3> ix, int64_t n, uint64_t seed, uint64_t offset,
                               double keep_p, compute_t<T> scale) {
  using C = compute_t<T>;
  int64_t off[3];
  const int64_t blocks = (n + 3) / 4;
  INGOT_GRID_STRIDE(j, blocks) {
    const sdk::PhiloxBlock block = sdk::philox_block(seed, offset + static_cast<uint64_t>(j));
    for (unsigned lane = 0; lane < 4; ++lane) {
      const int64_t i = 4 * j + lane;
      if (i >= n) break;
      ix.offsets(i, off);
      const bool k = sdk::philox_bernoulli(block.v[lane], keep_p);
      keep[off[1]] = k;
      y[off[0]] = cvt<T>(k ? cvt<C>(x[off[2]]) * scale : C(0));
    }
  }
}

}  // namespace

bool rng_supports(const sdk::OpCall& c) {
  if (!all_device_strided(c) || !has_attr<ingot_attr_rng>(c.attrs)) return false;
  if (c.op == INGOT_OP_DROPOUT) {
    if (c.n_in != 1 || c.n_out != 2 || c.out[1].dtype != INGOT_BOOL || c.out[0].dtype != c.in[0].dtype) return false;
    if (c.in[0].ndim != c.out[0].ndim || c.in[0].ndim != c.out[1].ndim) return false;
    for (int d = 0; d < c.in[0].ndim; ++d)
      if (c.in[0].shape[d] != c.out[0].shape[d] || c.in[0].shape[d] != c.out[1].shape[d]) return false;
    return has_dtype(INGOT_DTYPES_FLOAT, c.in[0].dtype);
  }
  if (c.n_in != 0 || c.n_out != 1) return false;
  return has_dtype(c.op == INGOT_OP_BERNOULLI ? INGOT_DTYPES_ANY : INGOT_DTYPES_FLOAT, c.out[0].dtype);
}

void rng_run(const sdk::OpCall& c, const Launch& l) {
  const auto& a = sdk::attr<ingot_attr_rng>(c.attrs);
  const ingot_tensor_desc& out = c.out[0];
  const int64_t n = sdk::numel(out);
  if (n == 0) return;
  const unsigned grid = grid_for((n + 3) / 4, l);
  if (c.op == INGOT_OP_DROPOUT) {
    if (!(a.a >= 0.0 && a.a <= 1.0))
      throw sdk::Failure(INGOT_ERR_INVALID_ARGUMENT, "cuda dropout: p = " + std::to_string(a.a) + " is not in [0, 1]");
    const double keep_p = 1.0 - a.a;
    const double scale = keep_p > 0.0 ? 1.0 / keep_p : 0.0;
    const ingot_tensor_desc* ins[] = {&c.out[1], &c.in[0]};
    const Indexer<3> ix = make_indexer<3>(out, ins);
    visit_float(out.dtype, "dropout", [&](auto tag) {
      using T = decltype(tag);
      dropout_kernel<T><<<grid, kThreads, 0, l.stream>>>(sdk::data_ptr<T>(out), sdk::data_ptr<bool>(c.out[1]),
                                                         sdk::data_ptr<const T>(c.in[0]), ix, n, a.seed, a.offset,
                                                         keep_p, static_cast<compute_t<T>>(scale));
    });
    return check_launch("dropout");
  }
  const Indexer<1> ix = make_indexer<1>(out, nullptr);
  visit_dtype(out.dtype, "random", [&](auto tag) {
    using T = decltype(tag);
    random_kernel<T><<<grid, kThreads, 0, l.stream>>>(c.op, sdk::data_ptr<T>(out), ix, n, a.seed, a.offset, a.a, a.b);
  });
  check_launch("random");
}

}  // namespace ingot::cuda
