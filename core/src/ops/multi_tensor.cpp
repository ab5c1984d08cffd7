// Multi-tensor ops: argument checks, then one GLOBAL_NORM, SGD_UPDATE or ADAM_UPDATE call (or
// their CAPTURABLE forms, given a hyper-parameter tensor) for the whole list.
#include "ingot/ops/multi_tensor.h"

#include "ingot/ops/creation.h"
#include "ingot/runtime/op_info.h"
#include "ops/op_util.h"

namespace ingot {

namespace {

// Puts `hyper` first when it is defined (the op's CAPTURABLE form) and runs the update.
void run_update(OpKind plain, OpKind capturable, std::vector<Tensor>& inputs, const Tensor& hyper, const void* attr) {
  if (!hyper.defined()) {
    run_op_into(plain, inputs, {}, attr);
    return;
  }
  const char* name = op_info(capturable).name;
  INGOT_CHECK(hyper.dtype() == DType::F64 && hyper.numel() == 2 && hyper.is_contiguous(),
              "{}: the hyper-parameters must be a contiguous float64 tensor [lr, step], got {} {}", name,
              dtype_name(hyper.dtype()), hyper.shape().str());
  INGOT_CHECK(hyper.device() == inputs.front().device(), "{}: the hyper-parameters are on {}, the params on {}", name,
              hyper.device().str(), inputs.front().device().str());
  inputs.insert(inputs.begin(), hyper);
  run_op_into(capturable, inputs, {}, attr);
}

}  // namespace

Tensor global_norm(const std::vector<Tensor>& tensors) {
  if (tensors.empty()) return zeros(Shape{}, DType::F32);
  for (const Tensor& t : tensors) {
    detail::check_defined(t, "global_norm", "input");
    detail::check_op_dtype(INGOT_OP_GLOBAL_NORM, t.dtype());
  }
  return detail::run1(INGOT_OP_GLOBAL_NORM, tensors, Shape{}, DType::F32);
}

void sgd_update(const std::vector<Tensor>& params, const std::vector<Tensor>& grads, const std::vector<Tensor>& bufs,
                ingot_attr_sgd attr, const Tensor& hyper) {
  INGOT_CHECK(params.size() == grads.size(), "sgd_update: {} params but {} grads", params.size(), grads.size());
  INGOT_CHECK(bufs.size() == params.size() || (bufs.empty() && attr.momentum == 0.0),
              "sgd_update: {} params but {} momentum buffers (momentum {})", params.size(), bufs.size(), attr.momentum);
  if (params.empty()) return;
  std::vector<Tensor> inputs;
  inputs.reserve(3 * params.size());
  // Without momentum the buffer is never read: one 0-size placeholder keeps the op's triples.
  const Tensor no_buf =
      bufs.empty() ? Tensor::empty(Shape{0}, params.front().dtype(), params.front().device()) : Tensor();
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor& p = params[i];
    detail::check_defined(p, "sgd_update", "param");
    detail::check_defined(grads[i], "sgd_update", "grad");
    detail::check_op_dtype(INGOT_OP_SGD_UPDATE, p.dtype(), "param");
    INGOT_CHECK_SHAPE(grads[i].shape() == p.shape(), "sgd_update: param {} has grad {}", p.shape().str(),
                      grads[i].shape().str());
    const Tensor& buf = bufs.empty() ? no_buf : bufs[i];
    INGOT_CHECK_SHAPE(bufs.empty() || buf.shape() == p.shape(), "sgd_update: param {} has momentum buffer {}",
                      p.shape().str(), buf.shape().str());
    inputs.push_back(p);
    inputs.push_back(grads[i].to(p.dtype()));
    inputs.push_back(buf);
  }
  attr.struct_size = sizeof(attr);
  attr.abi_minor = INGOT_ABI_MINOR;
  run_update(INGOT_OP_SGD_UPDATE, INGOT_OP_SGD_UPDATE_CAPTURABLE, inputs, hyper, &attr);
}

void adam_update(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                 const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                 const std::vector<Tensor>& max_exp_avg_sqs, ingot_attr_adam attr, const Tensor& hyper) {
  const size_t n = params.size();
  INGOT_CHECK(grads.size() == n && exp_avgs.size() == n && exp_avg_sqs.size() == n,
              "adam_update: {} params but {} grads, {} exp_avgs and {} exp_avg_sqs", n, grads.size(), exp_avgs.size(),
              exp_avg_sqs.size());
  INGOT_CHECK(max_exp_avg_sqs.size() == (attr.amsgrad ? n : 0),
              "adam_update: {} params but {} max_exp_avg_sqs (amsgrad {})", n, max_exp_avg_sqs.size(),
              attr.amsgrad != 0);
  INGOT_CHECK(hyper.defined() || attr.step >= 1, "adam_update: step is {}, expected the 1-based number of this update",
              attr.step);
  if (n == 0) return;
  const int per = attr.amsgrad ? 5 : 4;
  std::vector<Tensor> inputs;
  inputs.reserve(per * n);
  for (size_t i = 0; i < n; ++i) {
    const Tensor& p = params[i];
    detail::check_defined(p, "adam_update", "param");
    detail::check_defined(grads[i], "adam_update", "grad");
    detail::check_op_dtype(INGOT_OP_ADAM_UPDATE, p.dtype(), "param");
    inputs.push_back(p);
    inputs.push_back(grads[i].to(p.dtype()));
    inputs.push_back(exp_avgs[i]);
    inputs.push_back(exp_avg_sqs[i]);
    if (attr.amsgrad) inputs.push_back(max_exp_avg_sqs[i]);
    static const char* const kNames[] = {"param", "grad", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"};
    for (int j = 1; j < per; ++j) {
      const Tensor& t = inputs[inputs.size() - per + j];
      detail::check_defined(t, "adam_update", kNames[j]);
      INGOT_CHECK_SHAPE(t.shape() == p.shape(), "adam_update: param {} has {} {}", p.shape().str(), kNames[j],
                        t.shape().str());
    }
  }
  attr.struct_size = sizeof(attr);
  attr.abi_minor = INGOT_ABI_MINOR;
  run_update(INGOT_OP_ADAM_UPDATE, INGOT_OP_ADAM_UPDATE_CAPTURABLE, inputs, hyper, &attr);
}

}  // namespace ingot
