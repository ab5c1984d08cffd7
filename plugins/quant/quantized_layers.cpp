// Static int8 layers: buffers in torch's order (weight, bias, then the parameters), the input
// quantized on entry unless it is u8 already, one QLINEAR / QCONV2D op.
#include "quantized_layers.h"

#include <fmt/format.h>

#include "ingot/base/error.h"
#include "ingot/runtime/backend.h"
#include "ingot/runtime/dispatch.h"
#include "ingot/runtime/op_info.h"
#include "qparams_choice.h"

namespace ingot::quant {
namespace {

QParams params_of(const Tensor& scale, const Tensor& zero_point, DType dtype) {
  QParams q;
  q.scale = scale;
  q.zero_point = zero_point;
  q.axis = 0;
  q.dtype = dtype;
  std::tie(q.quant_min, q.quant_max) = quant_range(dtype);
  return q;
}

const char* activation_name(Activation a) {
  switch (a) {
    case Activation::Relu:
      return "relu";
    case Activation::Gelu:
      return "gelu";
    case Activation::GeluTanh:
      return "gelu_tanh";
    default:
      return "none";
  }
}

}  // namespace

std::pair<Tensor, QParams> quantize_weight(const Tensor& f32_weight, bool per_channel) {
  const Tensor w = f32_weight.detach();
  QParams q = weight_qparams(w, per_channel);
  return {quantize(w, q), q};
}

QuantizedLayer::QuantizedLayer(const std::string& type, const QuantizedState& s)
    : nn::Module(type), activation_(s.activation) {
  INGOT_CHECK_AS(s.weight.dtype() == DType::I8, DTypeError, "{}: weight is {}, expected i8", type,
                 dtype_name(s.weight.dtype()));
  INGOT_CHECK_AS(s.input_q.dtype == DType::U8 && !s.input_q.per_channel(), DTypeError,
                 "{}: input parameters must be u8 per tensor", type);
  register_buffer("weight", s.weight);
  if (s.bias.defined()) {
    INGOT_CHECK_SHAPE(s.bias.dim() == 1 && s.bias.size(0) == s.weight.size(0), "{}: bias {} for weight {}", type,
                      s.bias.shape().str(), s.weight.shape().str());
    register_buffer("bias", s.bias.to(DType::F32));
  }
  register_buffer("weight_scale", s.weight_q.scale);
  register_buffer("weight_zero_point", s.weight_q.zero_point);
  register_buffer("input_scale", s.input_q.scale);
  register_buffer("input_zero_point", s.input_q.zero_point);
  if (s.output_q) {
    INGOT_CHECK_AS(s.output_q->dtype == DType::U8 && !s.output_q->per_channel(), DTypeError,
                   "{}: output parameters must be u8 per tensor", type);
    register_buffer("output_scale", s.output_q->scale);
    register_buffer("output_zero_point", s.output_q->zero_point);
  }
}

QParams QuantizedLayer::weight_qparams() const {
  return params_of(tensor("weight_scale"), tensor("weight_zero_point"), DType::I8);
}

QParams QuantizedLayer::input_qparams() const {
  return params_of(tensor("input_scale"), tensor("input_zero_point"), DType::U8);
}

std::optional<QParams> QuantizedLayer::output_qparams() const {
  const Tensor scale = tensor("output_scale");
  if (!scale.defined()) return std::nullopt;
  return params_of(scale, tensor("output_zero_point"), DType::U8);
}

QuantizedState QuantizedLayer::state() const {
  return {weight(), weight_qparams(), bias(), input_qparams(), output_qparams(), activation_};
}

Tensor QuantizedLayer::forward(const Tensor& x) {
  const QParams in = input_qparams();
  INGOT_CHECK_AS(x.dtype() == DType::U8 || is_floating(x.dtype()), DTypeError,
                 "{}: input is {}, expected floating or u8 (quantized with this layer's input parameters)", type_name(),
                 dtype_name(x.dtype()));
  // (a half-precision input comes from an f32 layer run under autocast)
  const Tensor xq = x.dtype() == DType::U8 ? x : quantize(x.to(DType::F32), in);
  const std::optional<QParams> out = output_qparams();
  return out ? run(xq, in, QOutput::Requantized, &*out) : run(xq, in, QOutput::F32, nullptr);
}

std::string QuantizedLayer::quant_repr() const {
  const QParams w = weight_qparams();
  return fmt::format("qscheme={}, activation={}, output={}",
                     w.per_channel() ? fmt::format("per_channel({})", w.scale.numel()) : "per_tensor",
                     activation_name(activation_), requantizes() ? "u8" : "f32");
}

QuantizedLinear::QuantizedLinear(const QuantizedState& s) : QuantizedLayer("QuantizedLinear", s) {
  INGOT_CHECK_SHAPE(s.weight.dim() == 2, "QuantizedLinear: weight {} must be [out, in]", s.weight.shape().str());
}

Tensor QuantizedLinear::run(const Tensor& xq, const QParams& in, QOutput kind, const QParams* out) {
  return quantized_linear(xq, in, weight(), weight_qparams(), bias(), kind, activation(), out);
}

Shape QuantizedLinear::output_shape(const Shape& input) const {
  const Tensor w = weight();
  INGOT_CHECK_SHAPE(input.size() >= 1 && input[input.size() - 1] == w.size(1),
                    "QuantizedLinear: input {} does not end in in_features = {}", input.str(), w.size(1));
  Shape out = input;
  out[out.size() - 1] = w.size(0);
  return out;
}

std::string QuantizedLinear::extra_repr() const {
  return fmt::format("in_features={}, out_features={}, {}", weight().size(1), weight().size(0), quant_repr());
}

QuantizedConv2d::QuantizedConv2d(const QuantizedState& s, const Conv2dParams& params)
    : QuantizedLayer("QuantizedConv2d", s), params_(params) {
  INGOT_CHECK_SHAPE(s.weight.dim() == 4, "QuantizedConv2d: weight {} must be OIHW", s.weight.shape().str());
}

Tensor QuantizedConv2d::run(const Tensor& xq, const QParams& in, QOutput kind, const QParams* out) {
  return quantized_conv2d(xq, in, weight(), weight_qparams(), bias(), params_, kind, activation(), out);
}

Shape QuantizedConv2d::output_shape(const Shape& input) const {
  return conv2d_output_shape(input, weight().shape(), params_);
}

std::string QuantizedConv2d::extra_repr() const {
  const Tensor w = weight();
  return fmt::format("{}, {}, kernel_size=({}, {}), stride=({}, {}), padding=({}, {}), {}", w.size(1) * params_.groups,
                     w.size(0), w.size(2), w.size(3), params_.stride[0], params_.stride[1], params_.padding[0],
                     params_.padding[1], quant_repr());
}

bool device_runs(const QuantizedState& s, const Conv2dParams* conv, Device device) {
  const Tensor w = s.weight.to(device);
  const Conv2dParams p = conv != nullptr ? *conv : Conv2dParams{};
  // the smallest input with a one-element output
  const Shape x_shape = conv != nullptr ? Shape{1, w.size(1) * p.groups, p.dilation[0] * (w.size(2) - 1) + 1,
                                                p.dilation[1] * (w.size(3) - 1) + 1}
                                        : Shape{1, w.size(1)};
  std::vector<Tensor> inputs{Tensor::empty(x_shape, DType::U8, device),
                             s.input_q.scale.to(device),
                             s.input_q.zero_point.to(device),
                             w,
                             s.weight_q.scale.to(device),
                             s.weight_q.zero_point.to(device)};
  if (s.bias.defined()) inputs.push_back(s.bias.to(device));
  const DType out = s.output_q ? DType::U8 : DType::F32;
  if (s.output_q) {
    inputs.push_back(s.output_q->scale.to(device));
    inputs.push_back(s.output_q->zero_point.to(device));
  }
  try {
    if (conv != nullptr) {
      const auto attr = conv2d_attr(p, s.bias.defined(), s.activation);
      const OutputSpec spec{conv2d_output_shape(x_shape, w.shape(), p), out};
      return select_backend(INGOT_OP_QCONV2D, inputs, {spec}, &attr, device).device_kind() == device.kind;
    }
    auto attr = make_attr<ingot_attr_matmul>();
    attr.has_bias = s.bias.defined() ? 1 : 0;
    attr.activation = static_cast<int32_t>(s.activation);
    const OutputSpec spec{Shape{1, w.size(0)}, out};
    return select_backend(INGOT_OP_QLINEAR, inputs, {spec}, &attr, device).device_kind() == device.kind;
  } catch (const Error&) {
    return false;
  }
}

}  // namespace ingot::quant
