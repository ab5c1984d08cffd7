// QLINEAR's own kernels (see qlinear_kernels.h): operand preparation for the cuBLASLt int8 GEMM
// (one block per row: shifted, zero-padded copy and row sum) and the epilogue (zero-point
// corrections, then i32, f32 or requantized u8 / i8 with per-channel scales, bias and activation).
#include "k_common.cuh"
#include "qlinear_kernels.h"
#include "quant_math.cuh"

namespace ingot::cuda {
namespace {

// x' = x - shift over logical rows of length k (x strided, any rank), zero-padded to k_pad.
template <class X>
__global__ void prepare_x_kernel(const X* x, Indexer<1> ix, int32_t shift, int64_t k, int64_t k_pad, int8_t* xq,
                                 int32_t* sums) {
  const int64_t row = blockIdx.x;
  int32_t sum = 0;
  for (int64_t j = threadIdx.x; j < k_pad; j += blockDim.x) {
    int32_t v = 0;
    if (j < k) {
      int64_t off[1];
      ix.offsets(row * k + j, off);
      v = static_cast<int32_t>(x[off[0]]) - shift;
    }
    xq[row * k_pad + j] = static_cast<int8_t>(v);
    sum += v;
  }
  sum = block_sum(sum);
  if (threadIdx.x == 0) sums[row] = sum;
}

// w' = w (strided [n, k]) zero-padded to [n_pad, k_pad]; sums[r] = sum_k (w[r, k] - w_zp[r]).
__global__ void prepare_w_kernel(const int8_t* w, int64_t stride0, int64_t stride1, int64_t n, int64_t k, int64_t k_pad,
                                 const int32_t* zp, int64_t zp_count, int8_t* wq, int32_t* sums) {
  const int64_t row = blockIdx.x;
  int32_t sum = 0;
  for (int64_t j = threadIdx.x; j < k_pad; j += blockDim.x) {
    const int32_t v = row < n && j < k ? w[row * stride0 + j * stride1] : 0;
    wq[row * k_pad + j] = static_cast<int8_t>(v);
    sum += v;
  }
  sum = block_sum(sum);
  if (threadIdx.x == 0) {
    const int64_t corrected = row < n ? sum - k * static_cast<int64_t>(zp[zp_count == 1 ? 0 : row]) : 0;
    sums[row] = static_cast<int32_t>(corrected);
  }
}

// Everything the epilogue reads: the GEMM result and sums, the parameters (device pointers), the
// output. Scale and zero-point tensors of one element serve every channel.
struct Epilogue {
  const int32_t *acc, *x_sums, *w_sums;
  int64_t m, n, ld;
  int32_t shift;
  const float* x_scale;
  const int32_t* x_zp;
  const float* w_scale;
  const int32_t* w_zp;
  int64_t w_count;
  const float* bias;  // null: no bias
  int32_t activation;
  const float* y_scale;
  const int32_t* y_zp;
  int32_t out_dtype;
  void* out;
};

__global__ void epilogue_kernel(Epilogue e) {
  INGOT_GRID_STRIDE(i, e.m * e.n) {
    const int64_t row = i / e.n, col = i % e.n, wc = e.w_count == 1 ? 0 : col;
    const int64_t exact = static_cast<int64_t>(e.acc[row * e.ld + col]) -
                          static_cast<int64_t>(e.w_zp[wc]) * e.x_sums[row] +
                          static_cast<int64_t>(e.shift - e.x_zp[0]) * e.w_sums[col];
    const auto acc = static_cast<int32_t>(exact);  // the op table's i32 accumulator (wraps)
    if (e.out_dtype == INGOT_I32) {
      static_cast<int32_t*>(e.out)[i] = acc;
      continue;
    }
    const float v = dequantized_output(acc, e.x_scale[0], e.w_scale[wc], e.bias, col, e.activation);
    if (e.out_dtype == INGOT_F32) {
      static_cast<float*>(e.out)[i] = v;
    } else if (e.out_dtype == INGOT_U8) {
      static_cast<uint8_t*>(e.out)[i] = static_cast<uint8_t>(quantize_value(v, e.y_scale[0], e.y_zp[0], 0, 255));
    } else {
      static_cast<int8_t*>(e.out)[i] = static_cast<int8_t>(quantize_value(v, e.y_scale[0], e.y_zp[0], -128, 127));
    }
  }
}

int32_t shift_of(const sdk::OpCall& c) { return c.in[0].dtype == INGOT_U8 ? 128 : 0; }

}  // namespace

void qlinear_prepare(const sdk::OpCall& c, const QLinearDims& d, const QLinearScratch& s, const Launch& l) {
  const ingot_tensor_desc &x = c.in[0], &w = c.in[3];
  Indexer<1> ix = make_indexer<1>(x, nullptr);
  flatten(ix);
  if (x.dtype == INGOT_U8) {
    prepare_x_kernel<<<static_cast<unsigned>(d.m), kThreads, 0, l.stream>>>(sdk::data_ptr<const uint8_t>(x), ix,
                                                                            shift_of(c), d.k, d.k_pad, s.x, s.x_sums);
  } else {
    prepare_x_kernel<<<static_cast<unsigned>(d.m), kThreads, 0, l.stream>>>(sdk::data_ptr<const int8_t>(x), ix,
                                                                            shift_of(c), d.k, d.k_pad, s.x, s.x_sums);
  }
  check_launch("qlinear prepare x");
  prepare_w_kernel<<<static_cast<unsigned>(d.n_pad), kThreads, 0, l.stream>>>(
      sdk::data_ptr<const int8_t>(w), w.strides[0], w.strides[1], d.n, d.k, d.k_pad,
      sdk::data_ptr<const int32_t>(c.in[5]), sdk::numel(c.in[5]), s.w, s.w_sums);
  check_launch("qlinear prepare w");
}

void qlinear_epilogue(const sdk::OpCall& c, const QLinearDims& d, const QLinearScratch& s, const Launch& l) {
  const auto& attr = sdk::attr<ingot_attr_matmul>(c.attrs);
  const int32_t out = c.out[0].dtype;
  const bool requantized = out == INGOT_U8 || out == INGOT_I8;
  Epilogue e{};
  e.acc = s.acc, e.x_sums = s.x_sums, e.w_sums = s.w_sums;
  e.m = d.m, e.n = d.n, e.ld = d.n_pad;
  e.shift = shift_of(c);
  e.x_scale = sdk::data_ptr<const float>(c.in[1]);
  e.x_zp = sdk::data_ptr<const int32_t>(c.in[2]);
  e.w_scale = sdk::data_ptr<const float>(c.in[4]);
  e.w_zp = sdk::data_ptr<const int32_t>(c.in[5]);
  e.w_count = sdk::numel(c.in[4]);
  e.bias = attr.has_bias ? sdk::data_ptr<const float>(c.in[6]) : nullptr;
  e.activation = attr.activation;
  e.y_scale = requantized ? sdk::data_ptr<const float>(c.in[c.n_in - 2]) : nullptr;
  e.y_zp = requantized ? sdk::data_ptr<const int32_t>(c.in[c.n_in - 1]) : nullptr;
  e.out_dtype = out;
  e.out = sdk::data_ptr(c.out[0]);
  epilogue_kernel<<<grid_for(d.m * d.n, l), kThreads, 0, l.stream>>>(e);
  check_launch("qlinear epilogue");
}

}  // namespace ingot::cuda
