// Multi-tensor ops: argument checks, then one GLOBAL_NORM or SGD_UPDATE call for the whole list.
#include "ingot/ops/multi_tensor.h"

#include "ingot/ops/creation.h"
#include "ingot/ops/op_info.h"
#include "ops/op_util.h"

namespace ingot {

Tensor global_norm(const std::vector<Tensor>& tensors) {
  if (tensors.empty()) return zeros(Shape{}, DType::F32);
  for (const Tensor& t : tensors) {
    detail::check_defined(t, "global_norm", "input");
    detail::check_op_dtype(INGOT_OP_GLOBAL_NORM, t.dtype());
  }
  return detail::run1(INGOT_OP_GLOBAL_NORM, tensors, Shape{}, DType::F32);
}

void sgd_update(const std::vector<Tensor>& params, const std::vector<Tensor>& grads, const std::vector<Tensor>& bufs,
                const SgdOptions& options) {
  INGOT_CHECK(params.size() == grads.size(), "sgd_update: {} params but {} grads", params.size(), grads.size());
  INGOT_CHECK(bufs.size() == params.size() || (bufs.empty() && options.momentum == 0.0),
              "sgd_update: {} params but {} momentum buffers (momentum {})", params.size(), bufs.size(),
              options.momentum);
  if (params.empty()) return;
  std::vector<Tensor> inputs;
  inputs.reserve(3 * params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor& p = params[i];
    detail::check_defined(p, "sgd_update", "param");
    detail::check_defined(grads[i], "sgd_update", "grad");
    detail::check_op_dtype(INGOT_OP_SGD_UPDATE, p.dtype(), "param");
    INGOT_CHECK_SHAPE(grads[i].shape() == p.shape(), "sgd_update: param {} has grad {}", p.shape().str(),
                      grads[i].shape().str());
    // Without momentum the buffer is never read; a zero tensor keeps the op's fixed triples.
    const Tensor buf = bufs.empty() ? zeros_like(p) : bufs[i];
    INGOT_CHECK_SHAPE(buf.shape() == p.shape(), "sgd_update: param {} has momentum buffer {}", p.shape().str(),
                      buf.shape().str());
    inputs.push_back(p);
    inputs.push_back(grads[i].to(p.dtype()));
    inputs.push_back(buf);
  }
  auto attr = make_attr<ingot_attr_sgd>();
  attr.lr = options.lr;
  attr.momentum = options.momentum;
  attr.dampening = options.dampening;
  attr.weight_decay = options.weight_decay;
  attr.nesterov = options.nesterov;
  attr.first_step = options.first_step;
  run_op_into(INGOT_OP_SGD_UPDATE, inputs, {}, &attr);
}

}  // namespace ingot
