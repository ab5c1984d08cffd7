// ONNX nodes for core's layers, from each layer's own attributes (kernel, stride, padding,
// dilation, groups, eps, ceil_mode, count_include_pad, flatten dims) and tensors (initializers
// under their state_dict names). Fusion (nn/fusion.h) is an execution detail that never changes
// the module tree, so there are no fused modules to export: Conv2d + BatchNorm2d stay two nodes.
#include "onnx_builtin_exporters.h"

#include <fmt/format.h>

#include <cmath>
#include <numbers>

#include "ingot/base/error.h"
#include "ingot/nn/activation.h"
#include "ingot/nn/basic_block.h"
#include "ingot/nn/batch_norm.h"
#include "ingot/nn/bottleneck.h"
#include "ingot/nn/conv2d.h"
#include "ingot/nn/dropout.h"
#include "ingot/nn/embedding.h"
#include "ingot/nn/flatten.h"
#include "ingot/nn/inverted_residual.h"
#include "ingot/nn/layer_norm.h"
#include "ingot/nn/linear.h"
#include "ingot/nn/pooling.h"
#include "ingot/nn/sequential.h"

namespace ingot::io::onnx::detail {
namespace {

std::string linear(OnnxGraph& g, const nn::Module& m, const std::string& path, const std::string& x) {
  const auto& l = as<nn::Linear>(m, path);
  const std::string w = g.initializer(child_path(path, "weight"), l.weight());
  const bool bias = l.bias().defined();
  const std::string b = bias ? g.initializer(child_path(path, "bias"), l.bias()) : "";
  if (g.shape(x).size() == 2) {  // Gemm: y = x W^T + b
    std::vector<std::string> in{x, w};
    if (bias) in.push_back(b);
    return g.node("Gemm", in, {attr("transB", int64_t{1})}, where(path));
  }
  // Linear over the last dim of a higher-rank input: MatMul with W^T, then Add.
  const std::string wt = g.node("Transpose", {w}, {attr("perm", std::vector<int64_t>{1, 0})}, w + "_t");
  const std::string y = g.node("MatMul", {x, wt}, {}, bias ? where(path) + "_matmul" : where(path));
  return bias ? g.node("Add", {y, b}, {}, where(path)) : y;
}

std::string conv2d(OnnxGraph& g, const nn::Module& m, const std::string& path, const std::string& x) {
  const auto& c = as<nn::Conv2d>(m, path);
  const Conv2dParams p = c.params();
  const Shape& ws = c.weight().shape();
  std::vector<std::string> in{x, g.initializer(child_path(path, "weight"), c.weight())};
  if (c.bias().defined()) in.push_back(g.initializer(child_path(path, "bias"), c.bias()));
  return g.node("Conv", in,
                {attr("kernel_shape", std::vector<int64_t>{ws[2], ws[3]}),
                 attr("strides", std::vector<int64_t>{p.stride[0], p.stride[1]}),
                 attr("pads", std::vector<int64_t>{p.padding[0], p.padding[1], p.padding[0], p.padding[1]}),
                 attr("dilations", std::vector<int64_t>{p.dilation[0], p.dilation[1]}), attr("group", p.groups)},
                where(path));
}

std::string batch_norm2d(OnnxGraph& g, const nn::Module& m, const std::string& path, const std::string& x) {
  const auto& bn = as<nn::BatchNorm2d>(m, path);
  const nn::BatchNormOptions& o = bn.options();
  INGOT_CHECK_AS(o.track_running_stats && bn.running_mean().defined(), InputError,
                 "ONNX export: layer '{}' (BatchNorm2d) has track_running_stats=false, so it normalises with batch "
                 "statistics in eval too; ONNX's BatchNormalization takes running statistics: retrain with "
                 "track_running_stats: true",
                 where(path));
  const int64_t c = bn.num_features();
  const std::string scale = o.affine ? g.initializer(child_path(path, "weight"), bn.weight())
                                     : g.constant_f32(where(path) + "_scale", std::vector<float>(c, 1.0f), Shape{c});
  const std::string bias = o.affine ? g.initializer(child_path(path, "bias"), bn.bias())
                                    : g.constant_f32(where(path) + "_bias", std::vector<float>(c, 0.0f), Shape{c});
  const std::string mean = g.initializer(child_path(path, "running_mean"), bn.running_mean());
  const std::string var = g.initializer(child_path(path, "running_var"), bn.running_var());
  return g.node("BatchNormalization", {x, scale, bias, mean, var},
                {attr("epsilon", static_cast<float>(o.eps)), attr("momentum", static_cast<float>(1.0 - o.momentum))},
                where(path));
}

std::string layer_norm(OnnxGraph& g, const nn::Module& m, const std::string& path, const std::string& x) {
  const auto& ln = as<nn::LayerNorm>(m, path);
  const Shape& ns = ln.normalized_shape();
  std::vector<std::string> in{x};
  if (ln.weight().defined()) {
    in.push_back(g.initializer(child_path(path, "weight"), ln.weight()));
    in.push_back(g.initializer(child_path(path, "bias"), ln.bias()));
  } else {  // ONNX's Scale input is required: ones
    in.push_back(g.constant_f32(where(path) + "_scale", std::vector<float>(ns.numel(), 1.0f), ns));
  }
  return g.node("LayerNormalization", in,
                {attr("axis", static_cast<int64_t>(-ns.size())), attr("epsilon", static_cast<float>(ln.eps()))},
                where(path));
}

// GELU in its erf form (torch's default): 0.5 x (1 + erf(x / sqrt 2)); or its tanh form (GPT-2's):
// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))). ONNX's Gelu op needs opset 20.
std::string gelu(OnnxGraph& g, const nn::Module& m, const std::string& path, const std::string& x) {
  const std::string p = where(path);
  const std::string one = g.constant_f32(p + "_one", {1.0f}, Shape());
  const std::string half = g.constant_f32(p + "_half", {0.5f}, Shape());
  std::string inner;
  if (as<nn::GELU>(m, path).is_tanh()) {
    const std::string c = g.constant_f32(p + "_c", {0.044715f}, Shape());
    const std::string k = g.constant_f32(p + "_k", {static_cast<float>(std::sqrt(2.0 / std::numbers::pi))}, Shape());
    const std::string x3 = g.node("Mul", {g.node("Mul", {x, x}, {}, p + "_x2"), x}, {}, p + "_x3");
    const std::string u = g.node("Add", {x, g.node("Mul", {x3, c}, {}, p + "_cx3")}, {}, p + "_u");
    inner = g.node("Tanh", {g.node("Mul", {u, k}, {}, p + "_ku")}, {}, p + "_tanh");
  } else {
    const std::string sqrt2 = g.constant_f32(p + "_sqrt2", {static_cast<float>(std::sqrt(2.0))}, Shape());
    inner = g.node("Erf", {g.node("Div", {x, sqrt2}, {}, p + "_scaled")}, {}, p + "_erf");
  }
  const std::string xe = g.node("Mul", {x, g.node("Add", {inner, one}, {}, p + "_plus1")}, {}, p + "_xe");
  return g.node("Mul", {xe, half}, {}, p);
}

std::vector<int64_t> pads(const Pool2dParams& p) { return {p.padding[0], p.padding[1], p.padding[0], p.padding[1]}; }

// ceil_mode: torch drops a last window that would start in the right padding, ONNX does not; the
// two output sizes are compared, and a layer where they differ is refused rather than misexported.
void check_ceil_mode(const nn::Module& m, const std::string& path, const Pool2dParams& p, const Shape& in) {
  if (!p.ceil_mode) return;
  const Shape out = m.output_shape(in);
  for (int d = 0; d < 2; ++d) {
    const int64_t span = in[2 + d] + 2 * p.padding[d] - p.kernel[d];
    const int64_t onnx = (span + p.stride[d] - 1) / p.stride[d] + 1;
    INGOT_CHECK_AS(onnx == out[2 + d], InputError,
                   "ONNX export: layer '{}' ({}) with ceil_mode on input {} drops a last window that ONNX keeps "
                   "(output {} vs {}); use ceil_mode: false or padding that avoids it",
                   where(path), m.type_name(), in.str(), out[2 + d], onnx);
  }
}

std::string max_pool2d(OnnxGraph& g, const nn::Module& m, const std::string& path, const std::string& x) {
  const Pool2dParams& p = as<nn::MaxPool2d>(m, path).params();
  check_ceil_mode(m, path, p, g.shape(x));
  return g.node("MaxPool", {x},
                {attr("kernel_shape", std::vector<int64_t>{p.kernel[0], p.kernel[1]}),
                 attr("strides", std::vector<int64_t>{p.stride[0], p.stride[1]}), attr("pads", pads(p)),
                 attr("ceil_mode", static_cast<int64_t>(p.ceil_mode))},
                where(path));
}

std::string avg_pool2d(OnnxGraph& g, const nn::Module& m, const std::string& path, const std::string& x) {
  const Pool2dParams& p = as<nn::AvgPool2d>(m, path).params();
  check_ceil_mode(m, path, p, g.shape(x));
  return g.node("AveragePool", {x},
                {attr("kernel_shape", std::vector<int64_t>{p.kernel[0], p.kernel[1]}),
                 attr("strides", std::vector<int64_t>{p.stride[0], p.stride[1]}), attr("pads", pads(p)),
                 attr("ceil_mode", static_cast<int64_t>(p.ceil_mode)),
                 attr("count_include_pad", static_cast<int64_t>(p.count_include_pad))},
                where(path));
}

// Global average pooling for a 1x1 output, an AveragePool when the output size divides the input;
// torch's uneven windows have no ONNX op.
std::string adaptive_avg_pool2d(OnnxGraph& g, const nn::Module& m, const std::string& path, const std::string& x) {
  const std::array<int64_t, 2> o = as<nn::AdaptiveAvgPool2d>(m, path).output_size();
  const Shape& in = g.shape(x);
  if (o[0] == 1 && o[1] == 1) return g.node("GlobalAveragePool", {x}, {}, where(path));
  INGOT_CHECK_AS(in[2] % o[0] == 0 && in[3] % o[1] == 0, InputError,
                 "ONNX export: layer '{}' (AdaptiveAvgPool2d) pools {}x{} to {}x{}, windows of unequal sizes that no "
                 "ONNX op computes; use an output size that divides the input",
                 where(path), in[2], in[3], o[0], o[1]);
  const std::vector<int64_t> k{in[2] / o[0], in[3] / o[1]};
  return g.node("AveragePool", {x}, {attr("kernel_shape", k), attr("strides", k)}, where(path));
}

// Reshape to the layer's output shape; the batch dim is copied (0) when it is kept, else inferred.
std::string flatten(OnnxGraph& g, const nn::Module& m, const std::string& path, const std::string& x) {
  const auto& f = as<nn::Flatten>(m, path);
  const Shape& in = g.shape(x);
  const int64_t start = f.start_dim() < 0 ? f.start_dim() + in.size() : f.start_dim();
  std::vector<int64_t> dims = m.output_shape(in).vec();
  if (!dims.empty()) dims[0] = start > 0 ? 0 : -1;
  return g.node("Reshape", {x, g.constant_i64(where(path) + "_shape", dims)}, {}, where(path));
}

std::string embedding(OnnxGraph& g, const nn::Module& m, const std::string& path, const std::string& x) {
  const auto& e = as<nn::Embedding>(m, path);
  const std::string w = g.initializer(child_path(path, "weight"), e.weight());
  // Indices fed as floats (a classifier's "input") are cast; token ids are int64 already.
  const std::string idx = g.dtype(x) == DType::I64
                              ? x
                              : g.node("Cast", {x}, {attr("to", int64_t{7})}, where(path) + "_indices");  // INT64
  return g.node("Gather", {w, idx}, {attr("axis", int64_t{0})}, where(path));
}

std::string sequential(OnnxGraph& g, const nn::Module& m, const std::string& path, const std::string& x) {
  std::string v = x;
  for (const auto& [name, child] : m.named_children()) v = g.module(*child, child_path(path, name), v);
  return v;
}

// relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut(x)), each part through its own exporter.
std::string basic_block(OnnxGraph& g, const nn::Module& m, const std::string& path, const std::string& x) {
  const auto& b = as<nn::BasicBlock>(m, path);
  const auto part = [&](const char* name, const std::string& in) {
    return g.module(*b.get_submodule(name), child_path(path, name), in);
  };
  const std::string b1 = part("bn1", part("conv1", x));
  const std::string h = g.node("Relu", {b1}, {}, child_path(path, "relu1"));
  g.set_shape(h, g.shape(b1));
  const std::string y = part("bn2", part("conv2", h));
  const std::string s = b.has_projection() ? part(b.shortcut_name().c_str(), x) : x;
  const std::string sum = g.node("Add", {y, s}, {}, child_path(path, "add"));
  g.set_shape(sum, g.shape(y));
  return g.node("Relu", {sum}, {}, where(path));
}

// relu(bn3(conv3(relu(bn2(conv2(relu(bn1(conv1(x)))))))) + downsample(x)).
std::string bottleneck(OnnxGraph& g, const nn::Module& m, const std::string& path, const std::string& x) {
  const auto& b = as<nn::Bottleneck>(m, path);
  const auto part = [&](const char* name, const std::string& in) {
    return g.module(*b.get_submodule(name), child_path(path, name), in);
  };
  std::string h = x;
  for (int i = 1; i <= 2; ++i) {
    const std::string y = part(fmt::format("bn{}", i).c_str(), part(fmt::format("conv{}", i).c_str(), h));
    h = g.node("Relu", {y}, {}, child_path(path, fmt::format("relu{}", i)));
    g.set_shape(h, g.shape(y));
  }
  const std::string y = part("bn3", part("conv3", h));
  const std::string s = b.has_projection() ? part("downsample", x) : x;
  const std::string sum = g.node("Add", {y, s}, {}, child_path(path, "add"));
  g.set_shape(sum, g.shape(y));
  return g.node("Relu", {sum}, {}, where(path));
}

// conv(x), plus x when the block is residual.
std::string inverted_residual(OnnxGraph& g, const nn::Module& m, const std::string& path, const std::string& x) {
  const auto& b = as<nn::InvertedResidual>(m, path);
  const std::string y = g.module(*b.get_submodule("conv"), child_path(path, "conv"), x);
  return b.residual() ? g.node("Add", {x, y}, {}, where(path)) : y;
}

// min(max(x, 0), 6): Clip with its bounds as inputs (opset 11 and later).
std::string relu6(OnnxGraph& g, const nn::Module&, const std::string& path, const std::string& x) {
  const std::string p = where(path);
  return g.node("Clip", {x, g.constant_f32(p + "_min", {0.0f}, Shape()), g.constant_f32(p + "_max", {6.0f}, Shape())},
                {}, p);
}

std::string identity(OnnxGraph&, const nn::Module&, const std::string&, const std::string& x) { return x; }

ModuleExporter unary(const std::string& op) {
  return [op](OnnxGraph& g, const nn::Module&, const std::string& path, const std::string& x) {
    return g.node(op, {x}, {}, where(path));
  };
}

}  // namespace

void add_builtin_exporters(ExporterRegistry& r) {
  r.add("Linear", linear);
  r.add("Conv2d", conv2d);
  r.add("BatchNorm2d", batch_norm2d);
  r.add("LayerNorm", layer_norm);
  r.add("ReLU", unary("Relu"));
  r.add("ReLU6", relu6);
  r.add("Sigmoid", unary("Sigmoid"));
  r.add("Tanh", unary("Tanh"));
  r.add("GELU", gelu);
  r.add("MaxPool2d", max_pool2d);
  r.add("AvgPool2d", avg_pool2d);
  r.add("AdaptiveAvgPool2d", adaptive_avg_pool2d);
  r.add("Flatten", flatten);
  r.add("Dropout", identity);
  r.add("Embedding", embedding);
  r.add("Sequential", sequential);
  r.add("BasicBlock", basic_block);
  r.add("Bottleneck", bottleneck);
  r.add("InvertedResidual", inverted_residual);
}

}  // namespace ingot::io::onnx::detail
