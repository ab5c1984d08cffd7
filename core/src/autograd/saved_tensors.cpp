// Shape-only stand-ins for the tensors a gradient rule does not read, and the check that makes a
// rule reading one fail with the op's name instead of reading memory that is not there.
#include "ingot/autograd/saved_tensors.h"

#include <fmt/format.h>

#include "ingot/base/allocator.h"
#include "record.h"

namespace ingot::autograd {

namespace {

/// The allocator of stand-in storages: zero bytes, no memory, no statistics.
class NoDataAllocator final : public Allocator {
 public:
  void* allocate(size_t bytes) override {
    INGOT_CHECK(bytes == 0, "shape-only stand-in: asked for {} bytes", bytes);
    return nullptr;
  }
  void deallocate(void* /*ptr*/, size_t /*bytes*/) override {}
  MemoryStats stats() const override { return {}; }
  void reset_peak() override {}
  void empty_cache() override {}
};

NoDataAllocator& no_data_allocator() {
  static NoDataAllocator* alloc = new NoDataAllocator();  // outlives every stand-in
  return *alloc;
}

/// The call whose rule this thread runs (null outside run_grad_rule): what the error names.
thread_local const GradCall* t_rule_call = nullptr;

class RuleScope {
 public:
  explicit RuleScope(const GradCall* call) : outer_(t_rule_call) { t_rule_call = call; }
  ~RuleScope() { t_rule_call = outer_; }
  RuleScope(const RuleScope&) = delete;
  RuleScope& operator=(const RuleScope&) = delete;

 private:
  const GradCall* outer_;
};

/// "input 1 (f32 [128, 64])" when `storage` is one of the running rule's stand-ins.
std::string which(const GradCall& call, const Storage* storage) {
  for (size_t i = 0; i < call.inputs.size(); ++i)
    if (call.inputs[i].defined() && call.inputs[i].storage().get() == storage)
      return fmt::format("input {} ({} {})", i, dtype_name(call.inputs[i].dtype()), call.inputs[i].shape().str());
  for (size_t i = 0; i < call.outputs.size(); ++i)
    if (call.outputs[i].defined() && call.outputs[i].storage().get() == storage)
      return fmt::format("output {} ({} {})", i, dtype_name(call.outputs[i].dtype()), call.outputs[i].shape().str());
  return "a tensor";
}

}  // namespace

Tensor shape_only(const Tensor& t) {
  if (!t.defined()) return t;
  install_recorder();  // the recorder refuses ops on stand-ins
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = std::make_shared<Storage>(0, t.device(), no_data_allocator());
  impl->dtype = t.dtype();
  impl->shape = t.shape();
  impl->strides = t.strides();
  impl->offset = t.offset();
  return Tensor(std::move(impl));
}

bool is_shape_only(const Tensor& t) {
  return t.defined() && t.storage() != nullptr && t.storage()->data() == nullptr && t.storage()->nbytes() == 0 &&
         t.numel() > 0;
}

GradCall kept_for_backward(const GradCall& call) {
  const GradSaves saves = grad_saves(call.op, call.attrs, call.needs_grad);
  GradCall kept{call.op, {}, {}, call.attrs, call.needs_grad};
  kept.inputs.reserve(call.inputs.size());
  kept.outputs.reserve(call.outputs.size());
  for (size_t i = 0; i < call.inputs.size(); ++i)
    kept.inputs.push_back(saves.input(i) ? call.inputs[i] : shape_only(call.inputs[i]));
  for (size_t i = 0; i < call.outputs.size(); ++i)
    kept.outputs.push_back(saves.output(i) ? call.outputs[i] : shape_only(call.outputs[i]));
  return kept;
}

std::vector<Tensor> run_grad_rule(const GradCall& call, const std::vector<Tensor>& grad_outputs) {
  const GradRule rule = grad_rule(call.op);
  INGOT_CHECK(rule != nullptr, "op {} has no gradient rule", op_info(call.op).name);
  const RuleScope scope(&call);
  return rule(call, grad_outputs);
}

void refuse_shape_only(OpKind op, const std::vector<Tensor>& inputs) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!is_shape_only(inputs[i])) continue;
    if (t_rule_call == nullptr)
      throw Error(
          fmt::format("{}: input {} is a shape-only stand-in of a tensor the autograd graph did not keep "
                      "(it has no data); this is a bug in the caller, which must not run ops on it",
                      op_info(op).name, i));
    const char* rule_op = op_info(t_rule_call->op).name;
    throw Error(
        fmt::format("internal error: gradient of {}: the rule read the data of {} (in its op {}), which its GradSaves "
                    "declaration does not keep, so the graph holds only its shape; declare it in the rule of {} in "
                    "core/src/autograd/grad_rules.cpp",
                    rule_op, which(*t_rule_call, inputs[i].storage().get()), op_info(op).name, rule_op));
  }
}

}  // namespace ingot::autograd
