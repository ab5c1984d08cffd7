// Tensor's autograd methods: flags, .grad, detach and backward (torch's semantics).
#include "ingot/autograd/engine.h"
#include "ingot/autograd/node.h"
#include "record.h"

namespace ingot {

bool Tensor::requires_grad() const {
  const auto& m = impl().autograd;
  return m != nullptr && m->requires_grad;
}

const Tensor& Tensor::set_requires_grad(bool on) const {
  INGOT_CHECK(is_leaf(),
              "set_requires_grad: only a leaf tensor's flag can be set; this tensor was produced by {} (use detach())",
              grad_fn()->name());
  INGOT_CHECK_AS(!on || is_floating(dtype()), DTypeError, "set_requires_grad: only floating tensors can require grad, not {}",
                 dtype_name(dtype()));
  if (on) autograd::install_recorder();
  if (on || impl().autograd != nullptr) autograd::meta_of(*this).requires_grad = on;
  return *this;
}

Tensor Tensor::grad() const {
  const auto& m = impl().autograd;
  return m == nullptr ? Tensor() : m->grad;
}

void Tensor::set_grad(const Tensor& g) const {
  if (g.defined())
    INGOT_CHECK_SHAPE(g.shape() == shape(), "set_grad: gradient of shape {} for a tensor of shape {}", g.shape().str(),
                      shape().str());
  if (!g.defined() && impl().autograd == nullptr) return;
  autograd::meta_of(*this).grad = g;
}

bool Tensor::is_leaf() const {
  const auto& m = impl().autograd;
  return m == nullptr || m->grad_fn == nullptr;
}

std::shared_ptr<autograd::Node> Tensor::grad_fn() const {
  const auto& m = impl().autograd;
  return m == nullptr ? nullptr : m->grad_fn;
}

void Tensor::retain_grad() const {
  INGOT_CHECK(requires_grad(), "retain_grad: the tensor does not require grad");
  if (is_leaf()) return;  // leaves keep .grad anyway
  auto& m = autograd::meta_of(*this);
  auto& retained = m.grad_fn->retained();
  if (retained.size() <= static_cast<size_t>(m.output_nr)) retained.resize(static_cast<size_t>(m.output_nr) + 1);
  retained[static_cast<size_t>(m.output_nr)] = impl_ptr();
}

void Tensor::backward(const Tensor& gradient, bool retain_graph) const {
  autograd::backward({*this}, {gradient}, retain_graph);
}

Tensor Tensor::detach() const { return autograd::saved_alias(*this); }

}  // namespace ingot
