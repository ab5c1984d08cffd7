// DynamicQuantizedLinear (torch.ao.nn.quantized.dynamic.Linear): an i8 weight per output channel
// (or per tensor) and an f32 bias; each batch's input is quantized to u8 with parameters chosen
// from its own min and max (fbgemm's rule, over input_quant_range), then one QLINEAR op returns f32.
// state_dict: weight (i8), bias (f32, when present), weight_scale, weight_zero_point,
// input_quant_range (i32 [2]: qmin, qmax of the activations; [0, 127] with reduce_range).
#pragma once

#include <utility>

#include "ingot/nn/module.h"
#include "ingot/ops/quantize.h"

namespace ingot::quant {

class DynamicQuantizedLinear final : public nn::Module {
 public:
  /// `weight` i8 [out, in] with `weight_q`; `bias` f32 [out] or undefined; `reduce_range` picks
  /// the [0, 127] activation range (torch's fbgemm dynamic linear) instead of [0, 255].
  DynamicQuantizedLinear(const Tensor& weight, const QParams& weight_q, const Tensor& bias, bool reduce_range);
  /// From the stored tensors, input_quant_range included (loading).
  DynamicQuantizedLinear(const Tensor& weight, const QParams& weight_q, const Tensor& bias,
                         const Tensor& input_quant_range);

  Tensor forward(const Tensor& x) override;
  Shape output_shape(const Shape& input) const override;
  std::string extra_repr() const override;

  Tensor weight() const { return tensor("weight"); }
  Tensor bias() const { return tensor("bias"); }
  QParams weight_qparams() const;
  /// The activation range [qmin, qmax] the per-batch parameters are chosen for.
  std::pair<int32_t, int32_t> input_range() const;
  /// The u8 parameters this layer uses for input `x`.
  QParams input_qparams(const Tensor& x) const;
};

}  // namespace ingot::quant
