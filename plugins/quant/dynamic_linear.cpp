// DynamicQuantizedLinear: per batch, min and max of the input (two reductions read back), the
// parameters on the host, QUANTIZE, then QLINEAR with an f32 epilogue (bias added there).
#include "dynamic_linear.h"

#include <fmt/format.h>

#include "ingot/base/error.h"
#include "ingot/ops/reduce.h"
#include "qparams_choice.h"

namespace ingot::quant {

DynamicQuantizedLinear::DynamicQuantizedLinear(const Tensor& weight, const QParams& weight_q, const Tensor& bias,
                                               bool reduce_range)
    : DynamicQuantizedLinear(
          weight, weight_q, bias,
          Tensor::from_vector<int32_t>({0, reduce_range ? 127 : 255}, Shape{2}).to(weight.device())) {}

DynamicQuantizedLinear::DynamicQuantizedLinear(const Tensor& weight, const QParams& weight_q, const Tensor& bias,
                                               const Tensor& input_quant_range)
    : nn::Module("DynamicQuantizedLinear") {
  INGOT_CHECK_AS(weight.dtype() == DType::I8, DTypeError, "DynamicQuantizedLinear: weight is {}, expected i8",
                 dtype_name(weight.dtype()));
  INGOT_CHECK_SHAPE(weight.dim() == 2, "DynamicQuantizedLinear: weight {} must be [out, in]", weight.shape().str());
  INGOT_CHECK_SHAPE(input_quant_range.numel() == 2, "DynamicQuantizedLinear: input_quant_range {} must be [2]",
                    input_quant_range.shape().str());
  register_buffer("weight", weight);
  if (bias.defined()) register_buffer("bias", bias.to(DType::F32));
  register_buffer("weight_scale", weight_q.scale);
  register_buffer("weight_zero_point", weight_q.zero_point);
  register_buffer("input_quant_range", input_quant_range.to(DType::I32));
  const auto [lo, hi] = input_range();
  INGOT_CHECK_AS(0 <= lo && lo < hi && hi <= 255, InputError,
                 "DynamicQuantizedLinear: input_quant_range [{}, {}] is not a u8 range", lo, hi);
}

QParams DynamicQuantizedLinear::weight_qparams() const {
  QParams q;
  q.scale = tensor("weight_scale");
  q.zero_point = tensor("weight_zero_point");
  q.dtype = DType::I8;
  std::tie(q.quant_min, q.quant_max) = quant_range(DType::I8);
  return q;
}

std::pair<int32_t, int32_t> DynamicQuantizedLinear::input_range() const {
  const std::vector<int32_t> r = tensor("input_quant_range").to_vector<int32_t>();
  return {r[0], r[1]};
}

QParams DynamicQuantizedLinear::input_qparams(const Tensor& x) const {
  const auto [lo, hi] = input_range();
  const float mn = x.numel() > 0 ? static_cast<float>(ingot::min(x).item()) : 0.0f;
  const float mx = x.numel() > 0 ? static_cast<float>(ingot::max(x).item()) : 0.0f;
  return activation_qparams(choose_quantization_params(mn, mx, lo, hi, false), x.device());
}

Tensor DynamicQuantizedLinear::forward(const Tensor& x) {
  INGOT_CHECK_AS(is_floating(x.dtype()), DTypeError, "DynamicQuantizedLinear: input is {}, expected floating",
                 dtype_name(x.dtype()));
  const Tensor x32 = x.to(DType::F32);  // (half precision from an f32 layer under autocast)
  const QParams in = input_qparams(x32);
  return quantized_linear(quantize(x32, in), in, weight(), weight_qparams(), bias(), QOutput::F32);
}

Shape DynamicQuantizedLinear::output_shape(const Shape& input) const {
  const Tensor w = weight();
  INGOT_CHECK_SHAPE(input.size() >= 1 && input[input.size() - 1] == w.size(1),
                    "DynamicQuantizedLinear: input {} does not end in in_features = {}", input.str(), w.size(1));
  Shape out = input;
  out[out.size() - 1] = w.size(0);
  return out;
}

std::string DynamicQuantizedLinear::extra_repr() const {
  const auto [lo, hi] = input_range();
  return fmt::format("in_features={}, out_features={}, dtype=torch.qint8, qscheme={}, input_range=[{}, {}]",
                     weight().size(1), weight().size(0),
                     weight_qparams().per_channel() ? "torch.per_channel_symmetric" : "torch.per_tensor_symmetric", lo,
                     hi);
}

}  // namespace ingot::quant
