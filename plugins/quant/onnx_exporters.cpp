// The QDQ export of int8 layers. Values between nodes stay f32: a u8 activation of Ingot's chain is
// its dequantized value in the graph, and QuantizeLinear with the consumer's input parameters (the
// producer's output parameters) gives back the same u8 values, so onnxruntime can run each int8
// layer with integer kernels (QLinearConv, QLinearMatMul) or as f32 ops on the dequantized values.
// Scales are f32 scalars (per tensor) or [C] with axis 0 (per output channel); zero points u8 for
// activations, i8 for weights, as ONNX wants them typed like the quantized values.
#include "onnx_exporters.h"

#include "dynamic_linear.h"
#include "ingot/base/error.h"
#include "ingot/ops/quantize.h"
#include "quantized_layers.h"

namespace ingot::quant {
namespace {

using io::onnx::attr;
using io::onnx::child_path;
using io::onnx::OnnxGraph;

std::string where(const std::string& path) { return path.empty() ? "<model>" : path; }

// Scale and zero point initializers of `q` (named path.<prefix>_scale / _zero_point): scalars per
// tensor, [C] per channel; the zero point as `zp_type` (the quantized values' dtype).
std::pair<std::string, std::string> qparams(OnnxGraph& g, const std::string& path, const std::string& prefix,
                                            const QParams& q, DType zp_type) {
  Tensor scale = q.scale.to(DType::F32), zp = q.zero_point.to(zp_type);
  if (!q.per_channel()) {
    scale = scale.reshape(Shape());
    zp = zp.reshape(Shape());
  }
  return {g.initializer(child_path(path, prefix + "_scale"), scale),
          g.initializer(child_path(path, prefix + "_zero_point"), zp)};
}

// x -> QuantizeLinear -> DequantizeLinear with per-tensor u8 parameters: the values int8 kernels see.
std::string fake_quant(OnnxGraph& g, const std::string& x, const std::pair<std::string, std::string>& q,
                       const std::string& hint) {
  const std::string xq = g.node("QuantizeLinear", {x, q.first, q.second}, {}, hint + "_q");
  const std::string dq = g.node("DequantizeLinear", {xq, q.first, q.second}, {}, hint + "_dq");
  if (g.has_shape(x)) g.set_shape(dq, g.shape(x));
  return dq;
}

// The i8 weight (state_dict name path.weight) dequantized: per output channel along axis 0.
std::string weight(OnnxGraph& g, const std::string& path, const Tensor& w, const QParams& wq) {
  const std::string wi = g.initializer(child_path(path, "weight"), w);
  const auto q = qparams(g, path, "weight", wq, DType::I8);
  std::vector<io::onnx::Attribute> a;
  if (wq.per_channel()) a.push_back(attr("axis", int64_t{0}));
  return g.node("DequantizeLinear", {wi, q.first, q.second}, a, where(path) + "_weight_dq");
}

// y = x W^T + b on f32 values: Gemm for a 2-D x, else MatMul with W^T and Add.
std::string linear(OnnxGraph& g, const std::string& path, const std::string& x, const std::string& w,
                   const Tensor& bias, const std::string& hint) {
  const std::string b = bias.defined() ? g.initializer(child_path(path, "bias"), bias) : "";
  if (g.shape(x).size() == 2) {
    std::vector<std::string> in{x, w};
    if (!b.empty()) in.push_back(b);
    return g.node("Gemm", in, {attr("transB", int64_t{1})}, hint);
  }
  const std::string wt = g.node("Transpose", {w}, {attr("perm", std::vector<int64_t>{1, 0})}, hint + "_wt");
  const std::string y = g.node("MatMul", {x, wt}, {}, hint + "_matmul");
  return b.empty() ? y : g.node("Add", {y, b}, {}, hint);
}

std::string static_layer(OnnxGraph& g, const nn::Module& m, const std::string& path, const std::string& x) {
  const auto& q = dynamic_cast<const QuantizedLayer&>(m);
  const std::string p = where(path);
  INGOT_CHECK_AS(q.activation() == Activation::None || q.activation() == Activation::Relu, InputError,
                 "ONNX export: layer '{}' ({}) fuses an activation other than ReLU, which has no QDQ export", p,
                 m.type_name());
  const std::string xin = fake_quant(g, x, qparams(g, path, "input", q.input_qparams(), DType::U8), p + "_input");
  const std::string w = weight(g, path, q.weight(), q.weight_qparams());
  std::string y;
  if (const auto* conv = dynamic_cast<const QuantizedConv2d*>(&q)) {
    const Conv2dParams& c = conv->params();
    const Shape& ws = q.weight().shape();
    std::vector<std::string> in{xin, w};
    if (q.bias().defined()) in.push_back(g.initializer(child_path(path, "bias"), q.bias()));
    y = g.node("Conv", in,
               {attr("kernel_shape", std::vector<int64_t>{ws[2], ws[3]}),
                attr("strides", std::vector<int64_t>{c.stride[0], c.stride[1]}),
                attr("pads", std::vector<int64_t>{c.padding[0], c.padding[1], c.padding[0], c.padding[1]}),
                attr("dilations", std::vector<int64_t>{c.dilation[0], c.dilation[1]}), attr("group", c.groups)},
               p + "_conv");
  } else {
    y = linear(g, path, xin, w, q.bias(), p + "_linear");
  }
  if (q.activation() == Activation::Relu) y = g.node("Relu", {y}, {}, p + "_relu");
  if (const std::optional<QParams> out = q.output_qparams())
    y = fake_quant(g, y, qparams(g, path, "output", *out, DType::U8), p + "_output");
  return y;
}

// DynamicQuantizeLinear picks u8 parameters from each input's min and max over [0, 255] as fbgemm
// does for that range; the [0, 127] range of reduce_range has no ONNX op.
std::string dynamic_linear(OnnxGraph& g, const nn::Module& m, const std::string& path, const std::string& x) {
  const auto& d = dynamic_cast<const DynamicQuantizedLinear&>(m);
  const std::string p = where(path);
  const auto [lo, hi] = d.input_range();
  INGOT_CHECK_AS(lo == 0 && hi == 255, InputError,
                 "ONNX export: layer '{}' (DynamicQuantizedLinear) quantizes its input over [{}, {}] "
                 "(reduce_range); ONNX's DynamicQuantizeLinear uses [0, 255]: quantize with reduce_range: false",
                 p, lo, hi);
  const std::vector<std::string> outs{g.fresh(p + "_xq"), g.fresh(p + "_x_scale"), g.fresh(p + "_x_zero_point")};
  g.node("DynamicQuantizeLinear", {x}, {}, "", outs);
  const std::string xin = g.node("DequantizeLinear", {outs[0], outs[1], outs[2]}, {}, p + "_input_dq");
  g.set_shape(xin, g.shape(x));
  return linear(g, path, xin, weight(g, path, d.weight(), d.weight_qparams()), d.bias(), p);
}

std::string identity(OnnxGraph&, const nn::Module&, const std::string&, const std::string& x) { return x; }

}  // namespace

void register_onnx_exporters(io::onnx::ExporterRegistry& registry) {
  const std::vector<std::pair<std::string, io::onnx::ModuleExporter>> exporters = {
      {"QuantizedLinear", static_layer},
      {"QuantizedConv2d", static_layer},
      {"DynamicQuantizedLinear", dynamic_linear},
      {"Identity", identity},
  };
  for (const auto& [type, exporter] : exporters)
    if (registry.find(type) == nullptr) registry.add(type, exporter);
}

}  // namespace ingot::quant
