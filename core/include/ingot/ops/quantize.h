// Quantized arithmetic as ops (op table rows QUANTIZE, DEQUANTIZE, QLINEAR, QCONV2D): a quantized
// tensor is a plain u8 / i8 tensor whose scale and zero point travel beside it in a QParams.
// Choosing the parameters (observers, torch's rules) is the quant plugin's business, not core's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ingot/ops/linalg.h"
#include "ingot/tensor/tensor.h"

namespace ingot {

/// Scale and zero point of a quantized tensor: 1 element each (per tensor) or one per channel
/// along `axis` (per channel). Values are clamped to [quant_min, quant_max] when quantized.
struct QParams {
  Tensor scale;       ///< f32, [1] or [C], on the tensor's device
  Tensor zero_point;  ///< i32, same shape as scale
  int axis = 0;       ///< channel axis (per channel only)
  DType dtype = DType::U8;  ///< U8 or I8
  int32_t quant_min = 0;
  int32_t quant_max = 255;

  bool per_channel() const { return scale.defined() && scale.numel() > 1; }
  /// Per tensor from host values (quant range = the dtype's whole range unless given).
  static QParams per_tensor(double scale, int32_t zero_point, DType dtype, Device device = Device::cpu());
  /// Per channel along `axis` from host values (one scale and zero point per channel).
  static QParams per_channel_of(const std::vector<float>& scales, const std::vector<int32_t>& zero_points,
                                int axis, DType dtype, Device device = Device::cpu());
  /// The same parameters with their tensors on `device`.
  QParams to(Device device) const;
  /// "u8 per tensor scale 0.0123 zp 128" / "i8 per channel (64) axis 0": for logs.
  std::string str() const;
};

/// Full range of a quantized dtype: u8 [0, 255], i8 [-128, 127].
std::pair<int32_t, int32_t> quant_range(DType dtype);

/// torch.quantize_per_tensor / quantize_per_channel: q = clamp(nearbyint(x * (1/scale)) + zp).
Tensor quantize(const Tensor& x, const QParams& q);
/// torch.dequantize: (q - zp) * scale as f32.
Tensor dequantize(const Tensor& q, const QParams& qp);

/// What a quantized linear or convolution returns: f32 (dequantized, bias and activation applied),
/// i32 (the raw accumulator: no bias, no activation) or requantized u8 / i8 with `out`'s parameters.
enum class QOutput { F32, I32, Requantized };

/// x (u8 | i8, per tensor) times the int8 weight w [N, K] (per tensor or per output channel) as
/// torch.ao.nn.quantized.Linear: acc = sum (x - x_zp)(w - w_zp) in i32, then the epilogue `kind`
/// picks; `out` is read only for Requantized (per tensor).
Tensor quantized_linear(const Tensor& x, const QParams& xq, const Tensor& w, const QParams& wq, const Tensor& bias,
                        QOutput kind = QOutput::F32, Activation activation = Activation::None,
                        const QParams* out = nullptr);
/// The same for a convolution (x NCHW, w OIHW).
Tensor quantized_conv2d(const Tensor& x, const QParams& xq, const Tensor& w, const QParams& wq, const Tensor& bias,
                        const Conv2dParams& p, QOutput kind = QOutput::F32, Activation activation = Activation::None,
                        const QParams* out = nullptr);

}  // namespace ingot
