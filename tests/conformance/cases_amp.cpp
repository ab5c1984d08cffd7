// Mixed-precision cases: the calls a bf16 training step makes under autocast (train.amp), at the
// shapes of the Fashion-MNIST MLP and CNN and of ResNet-8 (batches cut down so that the reference
// stays fast): the Linear's matmul on a transposed weight with bias and ReLU, the convolutions and
// their backward ops, bias gradients summed from bf16, batch norm on bf16 data with f32 statistics,
// dropout's backward, pooling and the f32 <-> bf16 casts. Most are large enough (>= 32768
// elements) to take a backend's multi-threaded path, which the small family cases never reach.
#include "ingot/ops/elementwise.h"
#include "op_case.h"

namespace ingot::conformance {

namespace {

constexpr DType kBF16 = DType::BF16;

void sum_cases(OpKind op, CaseList& cases) {
  struct Sum {
    Shape in, out;
    DType out_dtype;
    const char* note;
  };
  const std::vector<Sum> sums = {{{128, 512}, {1, 512}, kBF16, "Linear bias gradient, batch 128"},
                                 {{128, 512}, {1, 512}, DType::F32, "into f32"},
                                 {{16, 32, 14, 14}, {1, 32, 1, 1}, kBF16, "conv bias gradient"},
                                 {{8, 64, 7, 7}, {8, 64, 1, 1}, kBF16, "spatial dims"},
                                 {{3, 5, 4097}, {1, 5, 1}, DType::F32, "long lines into f32"}};
  for (const Sum& s : sums) {
    OpCase c = new_case(op, s.note);
    c.inputs = {make_input(s.in, kBF16, next_seed(op), Layout::Contiguous, -2.0, 2.0)};
    c.outputs = {{s.out, s.out_dtype}};
    c.reduction = s.in.numel() / s.out.numel();
    cases.push_back(std::move(c));
  }
}

void matmul_cases(OpKind op, CaseList& cases) {
  struct Mm {
    Shape a, b;
    Layout la, lb;
    bool bias;
    int32_t act;
    const char* note;
  };
  // Linear computes x w^T with w [out, in]: b is a transposed view; its gradients are g^T x and g w.
  const std::vector<Mm> mms = {
      {{32, 784}, {784, 128}, Layout::Contiguous, Layout::Transposed, true, INGOT_ACT_RELU, "Linear 784-128, relu"},
      {{128, 256}, {256, 10}, Layout::Contiguous, Layout::Transposed, true, INGOT_ACT_NONE, "last Linear, batch 128"},
      {{64, 128}, {128, 96}, Layout::Transposed, Layout::Contiguous, false, INGOT_ACT_NONE, "weight gradient g^T x"},
      {{128, 64}, {64, 96}, Layout::Contiguous, Layout::Contiguous, false, INGOT_ACT_NONE, "input gradient g w"}};
  for (const Mm& m : mms) {
    OpCase c = new_case(op, m.note);
    c.inputs = {make_input(m.a, kBF16, next_seed(op), m.la), make_input(m.b, kBF16, next_seed(op), m.lb)};
    if (m.bias) c.inputs.push_back(make_input({m.b[1]}, kBF16, next_seed(op)));
    c.outputs = {{{m.a[0], m.b[1]}, kBF16}};
    auto a = make_attr<ingot_attr_matmul>();
    a.has_bias = m.bias ? 1 : 0;
    a.activation = m.act;
    c.set_attr(a);
    c.reduction = m.a[1];
    cases.push_back(std::move(c));
  }
}

void conv_cases(OpKind op, CaseList& cases) {
  struct Conv {
    Shape x, w;
    int64_t stride, padding;
    bool bias;
    const char* note;
  };
  const std::vector<Conv> convs = {{{4, 1, 28, 28}, {32, 1, 3, 3}, 1, 1, false, "CNN conv1"},
                                   {{2, 32, 14, 14}, {64, 32, 3, 3}, 1, 1, false, "CNN conv2"},
                                   {{2, 32, 14, 14}, {64, 32, 3, 3}, 1, 1, true, "bias, relu"},
                                   {{2, 16, 28, 28}, {32, 16, 3, 3}, 2, 1, false, "ResNet stride 2"},
                                   {{2, 16, 28, 28}, {32, 16, 1, 1}, 2, 0, false, "ResNet 1x1 shortcut"}};
  for (const Conv& v : convs) {
    if (v.bias && op != INGOT_OP_CONV2D) continue;
    const int64_t ho = (v.x[2] + 2 * v.padding - v.w[2]) / v.stride + 1;
    const int64_t wo = (v.x[3] + 2 * v.padding - v.w[3]) / v.stride + 1;
    const Shape y{v.x[0], v.w[0], ho, wo};
    auto a = make_attr<ingot_attr_conv2d>();
    a.stride[0] = a.stride[1] = v.stride;
    a.padding[0] = a.padding[1] = v.padding;
    a.dilation[0] = a.dilation[1] = 1;
    a.groups = 1;
    a.has_bias = v.bias ? 1 : 0;
    a.activation = v.bias ? INGOT_ACT_RELU : INGOT_ACT_NONE;
    OpCase c = new_case(op, v.note);
    c.set_attr(a);
    if (op == INGOT_OP_CONV2D) {
      c.inputs = {make_input(v.x, kBF16, next_seed(op)), make_input(v.w, kBF16, next_seed(op))};
      if (v.bias) c.inputs.push_back(make_input({v.w[0]}, kBF16, next_seed(op)));
      c.outputs = {{y, kBF16}};
      c.reduction = v.w[1] * v.w[2] * v.w[3];
    } else if (op == INGOT_OP_CONV2D_BWD_DATA) {
      c.inputs = {make_input(y, kBF16, next_seed(op)), make_input(v.w, kBF16, next_seed(op))};
      c.outputs = {{v.x, kBF16}};
      c.reduction = v.w[0] * v.w[2] * v.w[3];
    } else {
      c.inputs = {make_input(v.x, kBF16, next_seed(op)), make_input(y, kBF16, next_seed(op))};
      c.outputs = {{v.w, kBF16}};
      c.reduction = y[0] * y[2] * y[3];
    }
    cases.push_back(std::move(c));
  }
}

// Batch norm on bf16 data: per-channel tensors in bf16 (what the functional op passes, casting the
// weight to the input's dtype) or in f32 (torch's mixed-type form); statistics are always f32.
void batch_norm_cases(OpKind op, CaseList& cases) {
  const Shape x{8, 32, 14, 14}, ch{32};
  for (const DType wt : {kBF16, DType::F32}) {
    for (const bool training : {true, false}) {
      if (op == INGOT_OP_BATCH_NORM_BWD && !training) continue;
      OpCase c = new_case(op, std::string(training ? "training" : "eval") + ", weight " + std::string(dtype_name(wt)));
      auto a = make_attr<ingot_attr_batch_norm>();
      a.training = training ? 1 : 0, a.has_affine = 1, a.eps = 1e-5, a.momentum = 0.1;
      c.set_attr(a);
      c.reduction = x.numel() / ch.numel();
      const Tensor mean = make_input(ch, DType::F32, next_seed(op), Layout::Contiguous, -0.5, 0.5);
      const Tensor spread = make_input(ch, DType::F32, next_seed(op), Layout::Contiguous, 0.5, 2.0);
      if (op == INGOT_OP_BATCH_NORM) {
        c.inputs = {make_input(x, kBF16, next_seed(op), Layout::Contiguous, -2.0, 2.0),
                    make_input(ch, wt, next_seed(op)), make_input(ch, wt, next_seed(op)), mean, spread};
        c.outputs = {{x, kBF16}, {ch, DType::F32}, {ch, DType::F32}};
        if (training) c.mutated_inputs = {3, 4};
      } else {  // (grad_y, x, weight, save_mean, save_invstd) -> (grad_x, grad_weight, grad_bias)
        c.inputs = {make_input(x, kBF16, next_seed(op)),
                    make_input(x, kBF16, next_seed(op), Layout::Contiguous, -2.0, 2.0),
                    make_input(ch, wt, next_seed(op)), mean, spread};
        c.outputs = {{x, kBF16}, {ch, wt}, {ch, wt}};
      }
      cases.push_back(std::move(c));
    }
  }
}

// [N, C, H, W] with the four values of every 2x2 window distinct (a window's permutation of
// -2..1 plus 4 * a random integer per window): bf16 holds them exactly, so the argmax is unique.
Tensor distinct_windows(const Shape& x, uint64_t seed) {
  const Shape windows{x[0], x[1], x[2] / 2, x[3] / 2};
  const Tensor taps = distinct_along({windows[0], windows[1], windows[2], windows[3], 4}, DType::F32, seed, 4);
  const Tensor offset = small_ints({windows[0], windows[1], windows[2], windows[3], 1}, DType::F32, seed + 1, -8, 7);
  const Tensor v = (taps + offset * 4.0).view({windows[0], windows[1], windows[2], windows[3], 2, 2});
  return v.permute({0, 1, 2, 4, 3, 5}).contiguous().view(x).to(kBF16);
}

void pool_cases(OpKind op, CaseList& cases) {
  const bool is_max = op == INGOT_OP_MAX_POOL2D || op == INGOT_OP_MAX_POOL2D_BWD;
  // the CNN's 2x2 max pools; ResNet-8's global average pool (AdaptiveAvgPool2d to 1x1)
  const Shape x = is_max ? Shape{8, 32, 28, 28} : Shape{16, 64, 7, 7};
  const int64_t k = is_max ? 2 : 7;
  const Shape y{x[0], x[1], x[2] / k, x[3] / k};
  auto a = make_attr<ingot_attr_pool2d>();
  a.kernel[0] = a.kernel[1] = a.stride[0] = a.stride[1] = k;
  a.count_include_pad = 1;
  OpCase c = new_case(op, is_max ? "CNN 2x2 pool" : "ResNet global pool");
  c.set_attr(a);
  c.reduction = k * k;
  const Tensor in = is_max ? distinct_windows(x, next_seed(op)) : make_input(x, kBF16, next_seed(op));
  if (op == INGOT_OP_MAX_POOL2D) {
    c.inputs = {in};
    c.outputs = {{y, kBF16}, {y, DType::I64}};
    c.compared_outputs = {0};
  } else if (op == INGOT_OP_MAX_POOL2D_BWD) {
    c.inputs = {make_input(y, kBF16, next_seed(op)), in};
    c.outputs = {{x, kBF16}};
    c.pool_workspace = true;
  } else if (op == INGOT_OP_AVG_POOL2D) {
    c.inputs = {in};
    c.outputs = {{y, kBF16}};
  } else {
    c.inputs = {make_input(y, kBF16, next_seed(op))};
    c.outputs = {{x, kBF16}};
  }
  cases.push_back(std::move(c));
}

// Activations and gradients of a conv layer (ReLU, residual adds) and of the CNN's hidden layer
// (dropout's backward: where(keep, g * scale, 0) with bf16 scalars).
void elementwise_cases(OpKind op, CaseList& cases) {
  const Shape act{16, 32, 14, 14}, hidden{128, 512};
  OpCase c = new_case(op, "");
  switch (op) {
    case INGOT_OP_RELU:
      c.inputs = {make_input(act, kBF16, next_seed(op))};
      c.outputs = {{act, kBF16}};
      break;
    case INGOT_OP_RELU_BWD:
      c.inputs = {make_input(hidden, kBF16, next_seed(op)), make_input(hidden, kBF16, next_seed(op))};
      c.outputs = {{hidden, kBF16}};
      c.tolerance = 0.0;
      break;
    case INGOT_OP_ADD:
    case INGOT_OP_SUB:
      c.inputs = {make_input(act, kBF16, next_seed(op)), make_input(act, kBF16, next_seed(op))};
      c.outputs = {{act, kBF16}};
      break;
    case INGOT_OP_MUL:
      c.note = "times a bf16 scalar";
      c.inputs = {make_input(hidden, kBF16, next_seed(op)),
                  make_input({}, kBF16, next_seed(op), Layout::Contiguous, 1, 2)};
      c.outputs = {{hidden, kBF16}};
      break;
    case INGOT_OP_WHERE:
      c.note = "dropout's backward";
      c.inputs = {small_ints(hidden, DType::Bool, next_seed(op), 0, 1), make_input(hidden, kBF16, next_seed(op)),
                  make_input({}, kBF16, next_seed(op))};
      c.outputs = {{hidden, kBF16}};
      c.tolerance = 0.0;
      break;
    default:
      return;
  }
  cases.push_back(std::move(c));
}

void cast_cases(OpKind op, CaseList& cases) {
  struct Cast {
    Shape shape;
    DType from, to;
    Layout layout;
    const char* note;
  };
  const std::vector<Cast> casts = {{{784, 512}, DType::F32, kBF16, Layout::Transposed, "a Linear weight's view"},
                                   {{16, 32, 14, 14}, DType::F32, kBF16, Layout::Contiguous, "activation"},
                                   {{16, 32, 14, 14}, kBF16, DType::F32, Layout::Contiguous, "activation"},
                                   {{128, 512}, kBF16, DType::F32, Layout::Contiguous, "gradient"}};
  for (const Cast& k : casts) {
    OpCase c = new_case(op, k.note);
    c.inputs = {make_input(k.shape, k.from, next_seed(op), k.layout, -3.0, 3.0)};
    c.outputs = {{k.shape, k.to}};
    c.tolerance = 0.0;  // both directions round once: bit-exact
    cases.push_back(std::move(c));
  }
}

}  // namespace

CaseList amp_cases(OpKind op) {
  CaseList cases;
  switch (op) {
    case INGOT_OP_SUM:
    case INGOT_OP_MEAN:
      sum_cases(op, cases);
      break;
    case INGOT_OP_MATMUL:
      matmul_cases(op, cases);
      break;
    case INGOT_OP_CONV2D:
    case INGOT_OP_CONV2D_BWD_DATA:
    case INGOT_OP_CONV2D_BWD_WEIGHT:
      conv_cases(op, cases);
      break;
    case INGOT_OP_BATCH_NORM:
    case INGOT_OP_BATCH_NORM_BWD:
      batch_norm_cases(op, cases);
      break;
    case INGOT_OP_MAX_POOL2D:
    case INGOT_OP_MAX_POOL2D_BWD:
    case INGOT_OP_AVG_POOL2D:
    case INGOT_OP_AVG_POOL2D_BWD:
      pool_cases(op, cases);
      break;
    case INGOT_OP_CAST:
      cast_cases(op, cases);
      break;
    default:
      elementwise_cases(op, cases);
      break;
  }
  return cases;
}

}  // namespace ingot::conformance
