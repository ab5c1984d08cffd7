// Pooling: parameter checks, output sizes (PyTorch's pooling_output_shape), dispatch.
#include "ingot/ops/pool.h"

#include "ingot/base/grad_mode.h"
#include "ingot/ops/indexing.h"
#include "ingot/ops/reduce.h"
#include "ingot/runtime/op_info.h"
#include "ops/op_util.h"

namespace ingot {

namespace {

void check_float(const char* op, const Tensor& x) {
  INGOT_CHECK_AS(is_floating(x.dtype()), DTypeError, "{}: expects a floating input, got {}", op, dtype_name(x.dtype()));
}

}  // namespace

ingot_attr_pool2d pool2d_attr(const Pool2dParams& p) {
  auto attr = make_attr<ingot_attr_pool2d>();
  for (int i = 0; i < 2; ++i) {
    attr.kernel[i] = p.kernel[i];
    attr.stride[i] = p.stride[i] > 0 ? p.stride[i] : p.kernel[i];
    attr.padding[i] = p.padding[i];
  }
  attr.ceil_mode = p.ceil_mode;
  attr.count_include_pad = p.count_include_pad;
  return attr;
}

Pool2dParams pool2d_params(const ingot_attr_pool2d& attr) {
  Pool2dParams p;
  for (int i = 0; i < 2; ++i) {
    p.kernel[i] = attr.kernel[i];
    p.stride[i] = attr.stride[i];
    p.padding[i] = attr.padding[i];
  }
  p.ceil_mode = attr.ceil_mode != 0;
  p.count_include_pad = attr.count_include_pad != 0;
  return p;
}

Shape pool2d_output_shape(const Shape& x, const Pool2dParams& p) {
  INGOT_CHECK_SHAPE(x.size() == 4, "pool2d: input {} must be NCHW", x.str());
  const ingot_attr_pool2d a = pool2d_attr(p);
  Shape out{x[0], x[1], 0, 0};
  for (int i = 0; i < 2; ++i) {
    const int64_t k = a.kernel[i], s = a.stride[i], pad = a.padding[i], in = x[2 + i];
    INGOT_CHECK_SHAPE(k >= 1 && s >= 1 && pad >= 0 && 2 * pad <= k,
                      "pool2d: kernel {} stride {} padding {}: need kernel >= 1, stride >= 1, 0 <= padding <= kernel/2",
                      k, s, pad);
    const int64_t span = in + 2 * pad - k;
    INGOT_CHECK_SHAPE(span >= 0, "pool2d: kernel {} is larger than the padded input {} of {}", k, in + 2 * pad,
                      x.str());
    int64_t o = (p.ceil_mode ? span + s - 1 : span) / s + 1;
    if (p.ceil_mode && (o - 1) * s >= in + pad) --o;  // the last window must start inside
    out[2 + i] = o;
  }
  return out;
}

MaxPool2dResult max_pool2d(const Tensor& x, const Pool2dParams& p) {
  detail::check_defined(x, "max_pool2d", "input");
  check_float("max_pool2d", x);
  const Shape out = pool2d_output_shape(x.shape(), p);
  const auto attr = pool2d_attr(p);
  auto ys =
      run_op(INGOT_OP_MAX_POOL2D, {x}, {OutputSpec{out, x.dtype()}, OutputSpec{out, DType::I64}}, &attr, x.device());
  return {ys[0], ys[1]};
}

Tensor max_pool2d_values(const Tensor& x, const Pool2dParams& p) {
  detail::check_defined(x, "max_pool2d", "input");
  if (GradMode::is_enabled() && x.requires_grad()) return max_pool2d(x, p).y;
  // u8 / i8 too: max pooling commutes with quantization (monotone), so quantized models pool q
  detail::check_op_dtype(INGOT_OP_MAX_POOL2D, x.dtype());
  const Shape out = pool2d_output_shape(x.shape(), p);
  auto attr = pool2d_attr(p);
  attr.indices_unused = 1;
  return run_op(INGOT_OP_MAX_POOL2D, {x}, {OutputSpec{out, x.dtype()}, OutputSpec{out, DType::I64}}, &attr,
                x.device())[0];
}

Tensor max_pool2d_backward(const Tensor& grad_y, const Tensor& x, const Tensor& workspace, const Pool2dParams& p) {
  detail::check_defined(grad_y, "max_pool2d_backward", "grad_y");
  detail::check_defined(x, "max_pool2d_backward", "input");
  detail::check_defined(workspace, "max_pool2d_backward", "workspace");
  const Shape out = pool2d_output_shape(x.shape(), p);
  INGOT_CHECK_SHAPE(grad_y.shape() == out && workspace.shape() == out,
                    "max_pool2d_backward: grad_y {} and workspace {} must match the output {} of input {}",
                    grad_y.shape().str(), workspace.shape().str(), out.str(), x.shape().str());
  const auto attr = pool2d_attr(p);
  return detail::run1(INGOT_OP_MAX_POOL2D_BWD, {grad_y.to(x.dtype()), x, workspace}, x.shape(), x.dtype(), &attr);
}

Tensor avg_pool2d(const Tensor& x, const Pool2dParams& p) {
  detail::check_defined(x, "avg_pool2d", "input");
  check_float("avg_pool2d", x);
  const auto attr = pool2d_attr(p);
  return detail::run1(INGOT_OP_AVG_POOL2D, {x}, pool2d_output_shape(x.shape(), p), x.dtype(), &attr);
}

Tensor avg_pool2d_backward(const Tensor& grad_y, const Shape& x_shape, const Pool2dParams& p) {
  detail::check_defined(grad_y, "avg_pool2d_backward", "grad_y");
  check_float("avg_pool2d_backward", grad_y);
  const Shape out = pool2d_output_shape(x_shape, p);
  INGOT_CHECK_SHAPE(grad_y.shape() == out, "avg_pool2d_backward: grad_y {} must match the output {} of input {}",
                    grad_y.shape().str(), out.str(), x_shape.str());
  const auto attr = pool2d_attr(p);
  return detail::run1(INGOT_OP_AVG_POOL2D_BWD, {grad_y}, x_shape, grad_y.dtype(), &attr);
}

Tensor adaptive_avg_pool2d(const Tensor& x, std::array<int64_t, 2> out_hw) {
  detail::check_defined(x, "adaptive_avg_pool2d", "input");
  check_float("adaptive_avg_pool2d", x);
  INGOT_CHECK_SHAPE(x.dim() == 4 && out_hw[0] >= 1 && out_hw[1] >= 1,
                    "adaptive_avg_pool2d: input {} must be NCHW and the output size positive", x.shape().str());
  const int64_t h = x.shape()[2], w = x.shape()[3];
  if (h % out_hw[0] == 0 && w % out_hw[1] == 0) {
    Pool2dParams p;
    p.kernel = {h / out_hw[0], w / out_hw[1]};
    p.stride = p.kernel;
    return avg_pool2d(x, p);
  }
  std::vector<Tensor> rows;
  for (int64_t i = 0; i < out_hw[0]; ++i) {
    const int64_t h0 = i * h / out_hw[0], h1 = ((i + 1) * h + out_hw[0] - 1) / out_hw[0];
    std::vector<Tensor> cells;
    for (int64_t j = 0; j < out_hw[1]; ++j) {
      const int64_t w0 = j * w / out_hw[1], w1 = ((j + 1) * w + out_hw[1] - 1) / out_hw[1];
      cells.push_back(mean(x.slice(2, h0, h1).slice(3, w0, w1), {2, 3}, true));
    }
    rows.push_back(concat(cells, 3));
  }
  return concat(rows, 2);
}

}  // namespace ingot
