// Static int8 layers (torch.ao.nn.quantized.Linear / Conv2d): an i8 weight per tensor or per
// output channel, an f32 bias, the u8 parameters of their input (from calibration) and, when the
// next layer takes u8 too, of their output. Each takes f32 (quantized with its input parameters)
// or u8 (already quantized with them) and returns f32, or u8 when it requantizes.
// state_dict: weight (i8), bias (f32, when present), weight_scale, weight_zero_point, input_scale,
// input_zero_point, and output_scale, output_zero_point when it requantizes.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "ingot/nn/conv2d.h"
#include "ingot/nn/linear.h"
#include "ingot/ops/quantize.h"

namespace ingot::quant {

/// What a static int8 layer is made of (the form it is saved and loaded in).
struct QuantizedState {
  Tensor weight;                             ///< i8, the f32 layer's shape
  QParams weight_q;                          ///< i8 symmetric, per tensor or per output channel (axis 0)
  Tensor bias;                               ///< f32 [out], or undefined
  QParams input_q;                           ///< u8 per tensor
  std::optional<QParams> output_q;           ///< u8 per tensor: requantize the output with it
  Activation activation = Activation::None;  ///< fused after the bias (a folded-in ReLU)
};

/// `f32_weight` quantized symmetric i8 (torch's default per-channel weight observer when
/// per_channel, else the per-tensor one).
std::pair<Tensor, QParams> quantize_weight(const Tensor& f32_weight, bool per_channel);

class QuantizedLayer : public nn::Module {
 public:
  /// Input f32 (or f16 / bf16, cast) or u8 (see the file comment); output f32, or u8 with
  /// output_q's parameters.
  Tensor forward(const Tensor& x) override;

  QParams weight_qparams() const;
  QParams input_qparams() const;
  std::optional<QParams> output_qparams() const;
  Activation activation() const { return activation_; }
  bool requantizes() const { return output_qparams().has_value(); }
  Tensor weight() const { return tensor("weight"); }
  Tensor bias() const { return tensor("bias"); }
  /// The stored form (tensors shared with the module).
  QuantizedState state() const;

 protected:
  QuantizedLayer(const std::string& type, const QuantizedState& s);
  /// The int8 op on a u8 input with the layer's tensors.
  virtual Tensor run(const Tensor& xq, const QParams& in, QOutput kind, const QParams* out) = 0;
  /// "per_channel (32) / activation relu / output u8" part of extra_repr.
  std::string quant_repr() const;

 private:
  Activation activation_;
};

class QuantizedLinear final : public QuantizedLayer {
 public:
  explicit QuantizedLinear(const QuantizedState& s);
  Shape output_shape(const Shape& input) const override;
  std::string extra_repr() const override;

 private:
  Tensor run(const Tensor& xq, const QParams& in, QOutput kind, const QParams* out) override;
};

class QuantizedConv2d final : public QuantizedLayer {
 public:
  QuantizedConv2d(const QuantizedState& s, const Conv2dParams& params);
  Shape output_shape(const Shape& input) const override;
  std::string extra_repr() const override;
  const Conv2dParams& params() const { return params_; }

 private:
  Tensor run(const Tensor& xq, const QParams& in, QOutput kind, const QParams* out) override;
  Conv2dParams params_;
};

/// Whether the backends of `device` run the int8 op of a layer made of `s` (a QuantizedConv2d
/// with `conv`'s parameters, else a QuantizedLinear): dispatch's choice for a one-sample input
/// there; an op that only the host would run does not count.
bool device_runs(const QuantizedState& s, const Conv2dParams* conv, Device device);

}  // namespace ingot::quant
