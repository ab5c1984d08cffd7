// Parameter tensors and the exact epilogue of the quantized ops (see op_quant_common.h).
#include "op_quant_common.h"

#include <algorithm>
#include <cmath>

namespace ingot::onednn::quant {
namespace {

/// The one dim of a parameter tensor that holds more than one element (its length and stride).
void param_extent(const ingot_tensor_desc& d, int64_t& n, int64_t& stride) {
  n = 1, stride = 1;
  for (int i = 0; i < d.ndim; ++i) {
    if (d.shape[i] != 1) n = d.shape[i], stride = d.strides[i];
  }
}

template <class T>
std::vector<T> read(const ingot_tensor_desc& d) {
  int64_t n = 1, stride = 1;
  param_extent(d, n, stride);
  const T* p = sdk::data_ptr<const T>(d);
  std::vector<T> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = p[i * stride];
  return v;
}

/// y requantized as the op table defines it: nearbyint(y * inv) + zp, clamped to T. The rounding
/// adds and subtracts 1.5 * 2^23, which rounds to the nearest integer in the current rounding
/// mode exactly as nearbyint does for |y * inv| < 2^22, and vectorises (nearbyint is a call on
/// the baseline ISA). Larger values are first clamped to 2^22: with |zp| < 2^20 (the caller
/// checks) they clamp to the same end of T's range either way.
template <class T>
inline T q8(float y, float inv, float zp) {
  constexpr float lo = std::is_same_v<T, uint8_t> ? 0.f : -128.f, hi = std::is_same_v<T, uint8_t> ? 255.f : 127.f;
  constexpr float kRound = 12582912.f, kBig = 4194304.f;
  const float a = std::clamp(y * inv, -kBig, kBig);
  const float q = ((a + kRound) - kRound) + zp;
  return static_cast<T>(std::clamp(q, lo, hi));
}

/// The same with nearbyint itself, for a zero point too large for q8's shortcut.
template <class T>
inline T q8_exact(float y, float inv, float zp) {
  constexpr float lo = std::is_same_v<T, uint8_t> ? 0.f : -128.f, hi = std::is_same_v<T, uint8_t> ? 255.f : 127.f;
  return static_cast<T>(std::clamp(std::nearbyint(y * inv) + zp, lo, hi));
}

/// One row of the epilogue: inner elements of one (outer, channel) pair.
template <class T, bool Relu, bool Exact>
void q8_row(const int32_t* acc, T* out, int64_t n, float s, const float* b, float inv, float zp) {
  for (int64_t i = 0; i < n; ++i) {
    float y = static_cast<float>(acc[i]) * s;
    if (b != nullptr) y += *b;  // (no +0.f without a bias: -0 stays -0, as the reference keeps it)
    if constexpr (Relu) y = std::max(y, 0.f);
    out[i] = Exact ? q8_exact<T>(y, inv, zp) : q8<T>(y, inv, zp);
  }
}

template <class T>
void q8_rows(const int32_t* acc, int64_t rows, int64_t channels, int64_t inner, bool relu, const QValues& v,
             void* out) {
  const bool exact = v.y_zp <= -(1 << 20) || v.y_zp >= (1 << 20);
  const auto zp = static_cast<float>(v.y_zp);
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const auto c = static_cast<size_t>(r % channels);
    const float s = v.scale[c];
    const float* b = v.bias.empty() ? nullptr : &v.bias[c];
    const int32_t* a = acc + r * inner;
    T* o = static_cast<T*>(out) + r * inner;
    if (exact)
      relu ? q8_row<T, true, true>(a, o, inner, s, b, v.inv_y_scale, zp)
           : q8_row<T, false, true>(a, o, inner, s, b, v.inv_y_scale, zp);
    else
      relu ? q8_row<T, true, false>(a, o, inner, s, b, v.inv_y_scale, zp)
           : q8_row<T, false, false>(a, o, inner, s, b, v.inv_y_scale, zp);
  }
}

}  // namespace

bool param_ok(const ingot_tensor_desc& d, int32_t dtype, int64_t channels) {
  if (d.dtype != dtype || d.device_kind != INGOT_DEVICE_CPU || d.layout != INGOT_LAYOUT_STRIDED) return false;
  int64_t big_dims = 0;
  for (int i = 0; i < d.ndim; ++i) big_dims += d.shape[i] != 1 ? 1 : 0;
  const int64_t n = sdk::numel(d);
  return big_dims <= 1 && (n == 1 || (channels > 1 && n == channels));
}

std::vector<float> read_f32(const ingot_tensor_desc& d) { return read<float>(d); }
std::vector<int32_t> read_i32(const ingot_tensor_desc& d) { return read<int32_t>(d); }

std::optional<QKind> out_kind(int32_t dtype) {
  if (dtype == INGOT_F32) return QKind::F32;
  if (dtype == INGOT_I32) return QKind::I32;
  if (is_q8(dtype)) return QKind::Q8;
  return std::nullopt;
}

std::optional<QOperands> operands(const sdk::OpCall& c, bool has_bias, int32_t activation, int64_t channels) {
  if (c.n_out != 1 || c.n_in < 6) return std::nullopt;
  auto kind = out_kind(c.out[0].dtype);
  if (!kind) return std::nullopt;
  QOperands ops;
  ops.kind = *kind;
  if (*kind == QKind::I32 && (has_bias || activation != INGOT_ACT_NONE)) return std::nullopt;
  if (activation != INGOT_ACT_NONE && activation != INGOT_ACT_RELU) return std::nullopt;
  int next = 6;
  if (has_bias) ops.bias = next++;
  if (*kind == QKind::Q8) ops.y_scale = next++, ops.y_zp = next++;
  if (c.n_in != next) return std::nullopt;
  if (!param_ok(c.in[1], INGOT_F32, 0) || !param_ok(c.in[2], INGOT_I32, 0)) return std::nullopt;
  if (!param_ok(c.in[4], INGOT_F32, channels) || !param_ok(c.in[5], INGOT_I32, channels) ||
      sdk::numel(c.in[4]) != sdk::numel(c.in[5]))
    return std::nullopt;
  if (has_bias && (sdk::numel(c.in[ops.bias]) != channels || !param_ok(c.in[ops.bias], INGOT_F32, channels)))
    return std::nullopt;
  if (ops.y_scale >= 0 && (!param_ok(c.in[ops.y_scale], INGOT_F32, 0) || !param_ok(c.in[ops.y_zp], INGOT_I32, 0)))
    return std::nullopt;
  return ops;
}

QValues read_values(const sdk::OpCall& c, const QOperands& ops, int64_t channels) {
  QValues v;
  v.x_scale = read_f32(c.in[1])[0];
  v.x_zp = read_i32(c.in[2])[0];
  const std::vector<float> ws = read_f32(c.in[4]);
  const std::vector<int32_t> wz = read_i32(c.in[5]);
  const auto n = static_cast<size_t>(channels);
  v.scale.resize(n);
  v.w_zp.resize(n);
  for (size_t i = 0; i < n; ++i) {
    v.scale[i] = v.x_scale * ws[ws.size() == 1 ? 0 : i];
    v.w_zp[i] = wz[wz.size() == 1 ? 0 : i];
  }
  v.w_zp_zero = all_zero(v.w_zp);
  if (ops.bias >= 0) v.bias = read_f32(c.in[ops.bias]);
  if (ops.y_scale >= 0) {
    v.inv_y_scale = 1.0f / read_f32(c.in[ops.y_scale])[0];
    v.y_zp = read_i32(c.in[ops.y_zp])[0];
  }
  return v;
}

void apply_epilogue(const int32_t* acc, int64_t outer, int64_t channels, int64_t inner, const Epilogue& e,
                    const QValues& v, void* out) {
  const int64_t rows = outer * channels;
  if (e.kind == QKind::I32) {
    std::copy(acc, acc + rows * inner, static_cast<int32_t*>(out));
    return;
  }
  if (e.kind == QKind::Q8) {
    if (e.dtype == INGOT_U8)
      q8_rows<uint8_t>(acc, rows, channels, inner, e.relu, v, out);
    else
      q8_rows<int8_t>(acc, rows, channels, inner, e.relu, v, out);
    return;
  }
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const auto c = static_cast<size_t>(r % channels);
    const float s = v.scale[c];
    const int32_t* a = acc + r * inner;
    float* o = static_cast<float*>(out) + r * inner;
    if (v.bias.empty())
      for (int64_t i = 0; i < inner; ++i) o[i] = static_cast<float>(a[i]) * s;
    else
      for (int64_t i = 0; i < inner; ++i) o[i] = static_cast<float>(a[i]) * s + v.bias[c];
    if (e.relu)
      for (int64_t i = 0; i < inner; ++i) o[i] = std::max(o[i], 0.f);
  }
}

}  // namespace ingot::onednn::quant
