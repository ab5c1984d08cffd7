// QUANTIZE (floating x -> u8 / i8) and DEQUANTIZE (u8 / i8 / i32 / i64 -> f32), per tensor or per
// channel, on strided tensors. Both repeat the reference's arithmetic operation for operation, so
// results are bit-identical: q = clamp(rint(x * (1.0f / scale)) + zero_point) in f32 (ties to
// even), and (q - zero_point) * scale in double rounded once to f32.
#include "k_common.cuh"
#include "quant_math.cuh"

namespace ingot::cuda {
namespace {

// Where element i's scale and zero point are: channel (i / inner) % channels (1 channel: per tensor).
struct Channels {
  const float* scale;
  const int32_t* zero_point;
  int64_t inner, count;

  __device__ __forceinline__ int64_t of(int64_t i) const { return count == 1 ? 0 : (i / inner) % count; }
};

template <class T, class Q>
__global__ void quantize_kernel(const T* x, Q* y, Indexer<2> ix, Channels ch, int32_t lo, int32_t hi, int64_t n) {
  INGOT_GRID_STRIDE(i, n) {
    int64_t off[2];
    ix.offsets(i, off);
    const int64_t c = ch.of(i);
    y[off[0]] = static_cast<Q>(quantize_value(cvt<float>(x[off[1]]), ch.scale[c], ch.zero_point[c], lo, hi));
  }
}

template <class Q>
__global__ void dequantize_kernel(const Q* q, float* y, Indexer<2> ix, Channels ch, int64_t n) {
  INGOT_GRID_STRIDE(i, n) {
    int64_t off[2];
    ix.offsets(i, off);
    const int64_t c = ch.of(i);
    // the reference's double arithmetic: exact for 8-bit q, one rounding to f32
    const double centered = __dsub_rn(static_cast<double>(q[off[1]]), static_cast<double>(ch.zero_point[c]));
    y[off[0]] = __double2float_rn(__dmul_rn(centered, static_cast<double>(ch.scale[c])));
  }
}

bool is_q8(int32_t dtype) { return dtype == INGOT_U8 || dtype == INGOT_I8; }

// A parameter tensor of `count` values (1 or the channel count) that kernels index densely.
bool params_ok(const ingot_tensor_desc& d, int32_t dtype, int64_t count) {
  return d.dtype == dtype && d.ndim <= 1 && sdk::numel(d) == count && (count == 1 || d.strides[0] == 1);
}

// Channel count and inner size of a call's parameters; false when they fit neither per tensor nor
// per channel along the attribute's axis.
bool channels_of(const sdk::OpCall& c, int64_t& count, int64_t& inner) {
  const ingot_tensor_desc& t = c.in[0];
  count = sdk::numel(c.in[1]), inner = 1;
  if (count == 1) return params_ok(c.in[1], INGOT_F32, 1) && params_ok(c.in[2], INGOT_I32, 1);
  const auto& a = sdk::attr<ingot_attr_quantize>(c.attrs);
  if (a.axis < -t.ndim || a.axis >= t.ndim) return false;
  const int axis = a.axis < 0 ? a.axis + t.ndim : a.axis;
  for (int d = axis + 1; d < t.ndim; ++d) inner *= t.shape[d];
  return count == t.shape[axis] && params_ok(c.in[1], INGOT_F32, count) && params_ok(c.in[2], INGOT_I32, count);
}

bool same_shape(const ingot_tensor_desc& a, const ingot_tensor_desc& b) {
  if (a.ndim != b.ndim) return false;
  for (int d = 0; d < a.ndim; ++d)
    if (a.shape[d] != b.shape[d]) return false;
  return true;
}

}  // namespace

bool quant_supports(const sdk::OpCall& c) {
  if (!has_attr<ingot_attr_quantize>(c.attrs) || c.n_in != 3 || c.n_out != 1 || !all_device_strided(c)) return false;
  const ingot_tensor_desc &x = c.in[0], &y = c.out[0];
  int64_t count = 0, inner = 0;
  if (!same_shape(x, y) || !channels_of(c, count, inner)) return false;
  if (c.op == INGOT_OP_QUANTIZE) {
    const auto& a = sdk::attr<ingot_attr_quantize>(c.attrs);
    const int32_t lo = y.dtype == INGOT_U8 ? 0 : -128, hi = y.dtype == INGOT_U8 ? 255 : 127;
    return has_dtype(INGOT_DTYPES_FLOAT, x.dtype) && is_q8(y.dtype) && lo <= a.quant_min &&
           a.quant_min <= a.quant_max && a.quant_max <= hi;
  }
  return c.op == INGOT_OP_DEQUANTIZE && has_dtype(INGOT_DTYPES_INT, x.dtype) && y.dtype == INGOT_F32;
}

void quant_run(const sdk::OpCall& c, const Launch& l) {
  const ingot_tensor_desc &x = c.in[0], &y = c.out[0];
  const int64_t n = sdk::numel(y);
  if (n == 0) return;
  Channels ch{sdk::data_ptr<const float>(c.in[1]), sdk::data_ptr<const int32_t>(c.in[2]), 1, 1};
  channels_of(c, ch.count, ch.inner);
  const ingot_tensor_desc* ins[1] = {&x};
  Indexer<2> ix = make_indexer<2>(y, ins);
  flatten(ix);
  const unsigned grid = grid_for(n, l);
  if (c.op == INGOT_OP_QUANTIZE) {
    const auto& a = sdk::attr<ingot_attr_quantize>(c.attrs);
    visit_float(x.dtype, "quantize", [&](auto xt) {
      using T = decltype(xt);
      const T* xp = sdk::data_ptr<const T>(x);
      if (y.dtype == INGOT_U8)
        quantize_kernel<<<grid, kThreads, 0, l.stream>>>(xp, sdk::data_ptr<uint8_t>(y), ix, ch, a.quant_min,
                                                         a.quant_max, n);
      else
        quantize_kernel<<<grid, kThreads, 0, l.stream>>>(xp, sdk::data_ptr<int8_t>(y), ix, ch, a.quant_min, a.quant_max,
                                                         n);
    });
    check_launch("quantize");
    return;
  }
  float* yp = sdk::data_ptr<float>(y);
  switch (x.dtype) {
    case INGOT_U8:
      dequantize_kernel<<<grid, kThreads, 0, l.stream>>>(sdk::data_ptr<const uint8_t>(x), yp, ix, ch, n);
      break;
    case INGOT_I8:
      dequantize_kernel<<<grid, kThreads, 0, l.stream>>>(sdk::data_ptr<const int8_t>(x), yp, ix, ch, n);
      break;
    case INGOT_I32:
      dequantize_kernel<<<grid, kThreads, 0, l.stream>>>(sdk::data_ptr<const int32_t>(x), yp, ix, ch, n);
      break;
    default:
      dequantize_kernel<<<grid, kThreads, 0, l.stream>>>(sdk::data_ptr<const int64_t>(x), yp, ix, ch, n);
      break;
  }
  check_launch("dequantize");
}

}  // namespace ingot::cuda
