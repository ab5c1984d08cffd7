// Shared pieces of the quantized ops (QUANTIZE, DEQUANTIZE, QLINEAR, QCONV2D): the scale and
// zero-point tensors beside a quantized tensor, their values at execute time, and the exact
// epilogue loop (i32 accumulators -> f32 / i32 / requantized u8 / i8) that the paths oneDNN
// cannot fuse exactly fall back to.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "desc_util.h"
#include "ingot/plugin/sdk.h"

namespace ingot::onednn::quant {

/// u8 or i8: the dtypes a quantized tensor has.
inline bool is_q8(int32_t dtype) { return dtype == INGOT_U8 || dtype == INGOT_I8; }
/// The whole range of a quantized dtype (u8 [0, 255], i8 [-128, 127]).
inline int32_t q_min(int32_t dtype) { return dtype == INGOT_U8 ? 0 : -128; }
inline int32_t q_max(int32_t dtype) { return dtype == INGOT_U8 ? 255 : 127; }

/// A scale (f32) or zero-point (i32) tensor: on the host, 1 element, or `channels` elements in
/// one dim (any stride). channels 0: only 1 element is accepted.
bool param_ok(const ingot_tensor_desc& d, int32_t dtype, int64_t channels);
/// The values of a parameter tensor accepted by param_ok, in channel order.
std::vector<float> read_f32(const ingot_tensor_desc& d);
std::vector<int32_t> read_i32(const ingot_tensor_desc& d);
inline bool all_zero(const std::vector<int32_t>& v) {
  for (int32_t z : v)
    if (z != 0) return false;
  return true;
}

/// The epilogue the output's dtype picks (op table: QLINEAR).
enum class QKind { F32, I32, Q8 };
std::optional<QKind> out_kind(int32_t dtype);

/// Where the optional inputs of a QLINEAR / QCONV2D call are: (x, x_scale, x_zp, w, w_scale,
/// w_zp[, bias][, y_scale, y_zp]).
struct QOperands {
  int bias = -1, y_scale = -1, y_zp = -1;
  QKind kind = QKind::F32;
};
/// Checks the parameter tensors of a QLINEAR / QCONV2D call with `channels` output channels
/// (counts, dtypes, shapes; x per tensor, w per tensor or per channel, y per tensor) and the
/// epilogue the attributes ask for (bias only with f32 / q8 outputs, activation none or relu).
std::optional<QOperands> operands(const sdk::OpCall& c, bool has_bias, int32_t activation, int64_t channels);

/// The parameter values of one QLINEAR / QCONV2D call.
struct QValues {
  float x_scale = 1.f;
  int32_t x_zp = 0;
  std::vector<float> scale;   ///< per output channel: x_scale * w_scale[c], in f32 (the reference's product)
  std::vector<int32_t> w_zp;  ///< per output channel
  std::vector<float> bias;    ///< per output channel, empty without bias
  float inv_y_scale = 1.f;    ///< 1.0f / y_scale (q8 outputs)
  int32_t y_zp = 0;
  bool w_zp_zero = true;
};
QValues read_values(const sdk::OpCall& c, const QOperands& ops, int64_t channels);

/// How the exact epilogue writes one output element.
struct Epilogue {
  QKind kind = QKind::F32;
  int32_t dtype = INGOT_F32;
  bool relu = false;
};
/// acc[outer][channels][inner] (dense i32) -> out (dense, the epilogue's dtype), as the op table
/// defines it: f32 = acc * scale[c] + bias[c] then relu; q8 = that value requantized
/// (nearbyint(v * inv_y_scale) + y_zp, clamped to the dtype); i32 = acc.
void apply_epilogue(const int32_t* acc, int64_t outer, int64_t channels, int64_t inner, const Epilogue& e,
                    const QValues& v, void* out);

/// Calls fn(begin, end, channel) over the dense elements of `shape` split along `axis` (per
/// channel values) or as one run when `channels` is 1, in parallel.
template <class Fn>
void for_each_channel_run(const dims& shape, int axis, int64_t channels, Fn&& fn) {
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < static_cast<int>(shape.size()); ++i) {
    if (channels > 1 && i < axis) outer *= shape[static_cast<size_t>(i)];
    if (channels <= 1 || i > axis) inner *= shape[static_cast<size_t>(i)];
  }
  const int64_t c = channels > 1 ? channels : 1;
  const int64_t chunk = 16384;
  const int64_t pieces = (inner + chunk - 1) / chunk;
#pragma omp parallel for schedule(static) if (outer * c * inner > 32768)
  for (int64_t r = 0; r < outer * c * pieces; ++r) {
    const int64_t row = r / pieces, piece = r % pieces;
    const int64_t begin = row * inner + piece * chunk;
    const int64_t end = row * inner + std::min(inner, (piece + 1) * chunk);
    fn(begin, end, row % c);
  }
}

}  // namespace ingot::onednn::quant
