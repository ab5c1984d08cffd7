// Layer fusion: pattern matching over a container's children, BatchNorm folding (differentiable
// ops when a graph is recorded, one host loop otherwise) and the fused conv / matmul calls.
#include "ingot/nn/fusion.h"

#include <cmath>
#include <initializer_list>
#include <optional>
#include <typeinfo>

#include "ingot/base/grad_mode.h"
#include "ingot/nn/activation.h"
#include "ingot/nn/linear.h"
#include "ingot/ops/elementwise.h"

namespace ingot::nn {

namespace {

thread_local bool fusion_enabled = true;

/// `m` as a T when its dynamic type is exactly T (a subclass may override forward) and it need
/// not run alone (a hooked or checkpointed layer runs through its own operator(), so its hooks
/// see it and its segment is its own).
template <class T>
T* exactly(const ModulePtr& m) {
  Module* p = m.get();
  return p != nullptr && typeid(*p) == typeid(T) && !p->runs_alone() ? static_cast<T*>(p) : nullptr;
}

/// Whether an op on these tensors is recorded into the autograd graph.
bool records(std::initializer_list<Tensor> ts) {
  if (!GradMode::is_enabled()) return false;
  for (const Tensor& t : ts)
    if (t.defined() && t.requires_grad()) return true;
  return false;
}

/// The activation layer at `layers[j]` when it can be fused: ReLU and ReLU6 always, GELU only without a
/// graph (the fused GELU gradient recomputes the whole matmul / conv).
std::optional<Activation> activation_at(const std::vector<std::pair<std::string, ModulePtr>>& layers, size_t j,
                                        bool recording) {
  if (j >= layers.size()) return std::nullopt;
  if (exactly<ReLU>(layers[j].second)) return Activation::Relu;
  if (exactly<ReLU6>(layers[j].second)) return Activation::Relu6;
  if (const GELU* g = exactly<GELU>(layers[j].second); g != nullptr && !recording) {
    return g->is_tanh() ? Activation::GeluTanh : Activation::Gelu;
  }
  return std::nullopt;
}

Tensor apply(Activation act, const Tensor& y) {
  switch (act) {
    case Activation::Relu:
      return relu(y);
    case Activation::Gelu:
      return gelu(y);
    case Activation::GeluTanh:
      return gelu_tanh(y);
    case Activation::Relu6:
      return clamp(y, 0.0, 6.0);
    case Activation::None:
      break;
  }
  return y;
}

/// An f32 host tensor in plain row-major memory (or absent), readable with data<float>().
bool plain_f32(const Tensor& t) {
  return !t.defined() || (t.dtype() == DType::F32 && t.device().is_cpu() && !t.is_opaque() && t.is_contiguous());
}

/// The fold as one loop over the weights: a few microseconds, no op dispatch (batch-1 latency).
FoldedConv fold_on_host(const Conv2d& conv, const BatchNorm2d& bn) {
  const Tensor w = conv.weight();
  const int64_t out = w.shape()[0], per_out = w.numel() / out;
  FoldedConv f{Tensor::empty(w.shape(), DType::F32), Tensor::empty({out}, DType::F32)};
  const float* wp = w.data<float>();
  const float* bp = conv.bias().defined() ? conv.bias().data<float>() : nullptr;
  const float* gp = bn.weight().defined() ? bn.weight().data<float>() : nullptr;
  const float* betap = bn.bias().defined() ? bn.bias().data<float>() : nullptr;
  const float* mp = bn.running_mean().data<float>();
  const float* vp = bn.running_var().data<float>();
  float* fw = f.weight.data<float>();
  float* fb = f.bias.data<float>();
  for (int64_t o = 0; o < out; ++o) {
    const double scale = (gp ? gp[o] : 1.0) / std::sqrt(static_cast<double>(vp[o]) + bn.options().eps);
    fb[o] = static_cast<float>((betap ? betap[o] : 0.0) + ((bp ? bp[o] : 0.0) - mp[o]) * scale);
    // float products: one rounding more than torch's fold in double, and a vectorised loop
    const float s = static_cast<float>(scale);
    const float* src = wp + o * per_out;
    float* dst = fw + o * per_out;
    for (int64_t k = 0; k < per_out; ++k) dst[k] = src[k] * s;
  }
  return f;
}

/// The fold with ops: differentiable, any dtype and device.
FoldedConv fold_with_ops(const Conv2d& conv, const BatchNorm2d& bn) {
  const Tensor w = conv.weight();
  const int64_t out = w.shape()[0];
  Tensor scale = rsqrt(bn.running_var() + bn.options().eps);
  if (bn.weight().defined()) scale = scale * bn.weight();
  Tensor shift = conv.bias().defined() ? conv.bias() - bn.running_mean() : -bn.running_mean();
  Tensor bias = shift * scale;
  if (bn.bias().defined()) bias = bias + bn.bias();
  return {(w * scale.reshape({out, 1, 1, 1})).to(w.dtype()), bias.to(w.dtype())};
}

}  // namespace

bool FusionMode::is_enabled() { return fusion_enabled; }
void FusionMode::set_enabled(bool enabled) { fusion_enabled = enabled; }

bool batch_norm_foldable(const BatchNorm2d& bn) { return !bn.is_training() && bn.options().track_running_stats; }

FoldedConv fold_batch_norm(const Conv2d& conv, const BatchNorm2d& bn) {
  INGOT_CHECK(batch_norm_foldable(bn),
              "fold_batch_norm: BatchNorm2d({}) uses batch statistics (training mode or track_running_stats=False); "
              "call eval() first",
              bn.num_features());
  INGOT_CHECK_SHAPE(bn.num_features() == conv.out_channels(),
                    "fold_batch_norm: BatchNorm2d({}) cannot follow a conv with {} output channels", bn.num_features(),
                    conv.out_channels());
  const bool host = plain_f32(conv.weight()) && plain_f32(conv.bias()) && plain_f32(bn.weight()) &&
                    plain_f32(bn.bias()) && plain_f32(bn.running_mean()) && plain_f32(bn.running_var());
  if (host && !records({conv.weight(), conv.bias(), bn.weight(), bn.bias()})) return fold_on_host(conv, bn);
  return fold_with_ops(conv, bn);
}

Tensor conv_bn_act(Conv2d& conv, BatchNorm2d* bn, Activation act, const Tensor& x) {
  const bool fold = bn == nullptr || (batch_norm_foldable(*bn) && bn->num_features() == conv.out_channels());
  if (!FusionMode::is_enabled() || !fold || conv.runs_alone() || (bn != nullptr && bn->runs_alone())) {
    Tensor y = conv(x);
    if (bn != nullptr) y = (*bn)(y);
    return apply(act, y);
  }
  conv.output_shape(x.shape());  // Conv2d::forward's message for a wrong input
  if (bn == nullptr) return conv2d(x, conv.weight(), conv.bias(), conv.params(), act);
  const FoldedConv f = fold_batch_norm(conv, *bn);
  return conv2d(x, f.weight, f.bias, conv.params(), act);
}

Tensor block_conv_bn_act(const Module& block, const char* conv, const char* bn, Activation act, const Tensor& x) {
  const ModulePtr c = block.get_submodule(conv), b = block.get_submodule(bn);
  // Exactly the plain layers (a subclass may override forward); conv_bn_act leaves hooked ones alone.
  if (typeid(*c) == typeid(Conv2d) && typeid(*b) == typeid(BatchNorm2d))
    return conv_bn_act(static_cast<Conv2d&>(*c), static_cast<BatchNorm2d*>(b.get()), act, x);
  return apply(act, (*b)((*c)(x)));
}

size_t forward_fused(const std::vector<std::pair<std::string, ModulePtr>>& layers, size_t i, Tensor& x) {
  const ModulePtr& m = layers.at(i).second;
  if (FusionMode::is_enabled()) {
    if (Linear* lin = exactly<Linear>(m)) {
      // a wrong input goes to Linear::forward, whose message names the layer
      const bool fits = x.dim() >= 1 && x.shape().back() == lin->in_features();
      const auto act = activation_at(layers, i + 1, records({x, lin->weight(), lin->bias()}));
      if (fits && act) {
        x = matmul_ex(x, lin->weight().transpose(0, 1), lin->bias(), *act);
        return 2;
      }
    } else if (Conv2d* conv = exactly<Conv2d>(m)) {
      BatchNorm2d* bn = i + 1 < layers.size() ? exactly<BatchNorm2d>(layers[i + 1].second) : nullptr;
      const bool recording =
          records({x, conv->weight(), conv->bias()}) || (bn != nullptr && records({bn->weight(), bn->bias()}));
      if (bn != nullptr && batch_norm_foldable(*bn) && bn->num_features() == conv->out_channels()) {
        const auto act = activation_at(layers, i + 2, recording);
        x = conv_bn_act(*conv, bn, act.value_or(Activation::None), x);
        return act ? 3 : 2;
      }
      if (bn == nullptr) {
        if (const auto act = activation_at(layers, i + 1, recording)) {
          x = conv_bn_act(*conv, nullptr, *act, x);
          return 2;
        }
      }
    }
  }
  x = (*m)(x);
  return 1;
}

}  // namespace ingot::nn
