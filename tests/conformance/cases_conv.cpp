// MATMUL and CONV2D cases (with fused bias and activation post-ops) and conv2d's backward ops.
// Shapes are small and odd (not multiples of any SIMD width); tolerances scale with K.
#include "op_case.h"

namespace ingot::conformance {

namespace {

// A [..., R, C] operand; transposed = stored as [..., C, R] and viewed through strides.
Tensor operand(const Shape& shape, DType dt, uint64_t seed, bool transposed) {
  return make_input(shape, dt, seed, transposed ? Layout::Transposed : Layout::Contiguous);
}

struct Mm {
  Shape a, b;
  bool ta = false, tb = false, bias = false;
  int32_t act = INGOT_ACT_NONE;
  const char* note = "";
};

struct Conv {
  Shape x, w;
  int64_t stride[2] = {1, 1}, padding[2] = {0, 0}, dilation[2] = {1, 1};
  int64_t groups = 1;
  bool bias = false;
  int32_t act = INGOT_ACT_NONE;
  const char* note = "";
  bool winograd = false;  ///< INGOT_CONV_ALGO_WINOGRAD allowed
};

int64_t conv_out(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d) {
  return (in + 2 * p - d * (k - 1) - 1) / s + 1;
}

ingot_attr_conv2d conv_attr(const Conv& v, bool with_bias) {
  auto a = make_attr<ingot_attr_conv2d>();
  for (int i = 0; i < 2; ++i) a.stride[i] = v.stride[i], a.padding[i] = v.padding[i], a.dilation[i] = v.dilation[i];
  a.groups = v.groups;
  a.has_bias = with_bias ? 1 : 0;
  a.activation = with_bias ? v.act : INGOT_ACT_NONE;
  a.algorithm = v.winograd ? INGOT_CONV_ALGO_WINOGRAD : INGOT_CONV_ALGO_DIRECT;
  return a;
}

}  // namespace

CaseList matmul_cases(OpKind op) {
  CaseList cases;
  for (DType dt : table_dtypes(op)) {
    std::vector<Mm> mms = {{{3, 5}, {5, 4}},
                           {{17, 33}, {33, 9}, false, true, false, INGOT_ACT_NONE, "transposed b"},
                           {{2, 3, 4}, {4, 5}, false, false, true, INGOT_ACT_RELU, "batched a, bias, relu"},
                           {{1, 1}, {1, 1}},
                           {{9, 7}, {7, 3}, true, false, false, INGOT_ACT_NONE, "transposed a"},
                           {{6, 5}, {5, 7}, true, true, false, INGOT_ACT_NONE, "both transposed"},
                           {{2, 1, 3, 4}, {3, 4, 2}, false, false, false, INGOT_ACT_NONE, "batch broadcast"},
                           {{5, 16}, {16, 17}, false, false, true, INGOT_ACT_NONE, "bias"},
                           {{5, 16}, {16, 17}, false, false, true, INGOT_ACT_GELU, "bias, gelu"},
                           {{5, 16}, {16, 17}, false, false, true, INGOT_ACT_GELU_TANH, "bias, gelu tanh"},
                           {{33, 65}, {65, 18}, false, false, false, INGOT_ACT_NONE, "larger"},
                           {{33, 65}, {65, 18}, false, false, true, INGOT_ACT_RELU6, "larger, bias, relu6"},
                           {{3, 0}, {0, 4}, false, false, false, INGOT_ACT_NONE, "K = 0"},
                           {{0, 4}, {4, 2}, false, false, false, INGOT_ACT_NONE, "M = 0"}};
    for (const Mm& m : mms) {
      OpCase c = new_case(op, m.note);
      c.inputs = {operand(m.a, dt, next_seed(op), m.ta), operand(m.b, dt, next_seed(op), m.tb)};
      const int ra = m.a.size(), rb = m.b.size();
      Shape batch_a = m.a, batch_b = m.b;
      batch_a.resize(ra - 2), batch_b.resize(rb - 2);
      Shape out = broadcast_shapes(batch_a, batch_b);
      out.push_back(m.a[ra - 2]);
      out.push_back(m.b[rb - 1]);
      if (m.bias) c.inputs.push_back(make_input({m.b[rb - 1]}, dt, next_seed(op)));
      c.outputs = {{out, dt}};
      auto a = make_attr<ingot_attr_matmul>();
      a.has_bias = m.bias ? 1 : 0;
      a.activation = m.act;
      c.set_attr(a);
      c.reduction = m.a[ra - 1];
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

CaseList conv_cases(OpKind op) {
  CaseList cases;
  for (DType dt : table_dtypes(op)) {
    std::vector<Conv> convs = {
        {{2, 3, 7, 7}, {4, 3, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, false, INGOT_ACT_NONE, "3x3 pad 1"},
        {{1, 4, 9, 8}, {6, 2, 3, 3}, {2, 2}, {0, 0}, {1, 1}, 2, true, INGOT_ACT_RELU, "groups 2, stride 2, bias, relu"},
        {{2, 3, 9, 9}, {5, 3, 3, 3}, {1, 1}, {2, 2}, {2, 2}, 1, false, INGOT_ACT_NONE, "dilation 2"},
        {{1, 5, 6, 7}, {3, 5, 1, 1}, {1, 1}, {0, 0}, {1, 1}, 1, true, INGOT_ACT_NONE, "1x1, bias"},
        {{1, 3, 8, 6}, {4, 3, 3, 1}, {2, 1}, {1, 0}, {1, 1}, 1, false, INGOT_ACT_NONE, "3x1 kernel, stride (2,1)"},
        {{2, 4, 7, 7}, {4, 1, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 4, true, INGOT_ACT_GELU, "depthwise, bias, gelu"},
        {{1, 8, 6, 6},
         {8, 1, 3, 3},
         {2, 2},
         {1, 1},
         {1, 1},
         8,
         true,
         INGOT_ACT_RELU6,
         "depthwise stride 2, bias, relu6"},
        {{2, 16, 6, 6}, {16, 16, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true, INGOT_ACT_RELU6, "bias, relu6"},
        {{1, 17, 5, 5}, {16, 17, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, false, INGOT_ACT_NONE, "17 channels"},
        {{1, 1, 1, 1}, {1, 1, 1, 1}, {1, 1}, {0, 0}, {1, 1}, 1, false, INGOT_ACT_NONE, "1x1x1x1"},
        // Winograd allowed (ABI 2.5): f32 3x3 stride 1 may round otherwise than the direct sum
        {{2, 16, 10, 10}, {16, 16, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, false, INGOT_ACT_NONE, "winograd", true},
        {{4, 32, 7, 7}, {16, 32, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true, INGOT_ACT_RELU, "winograd, bias, relu", true}};
    for (const Conv& v : convs) {
      const int64_t ho = conv_out(v.x[2], v.w[2], v.stride[0], v.padding[0], v.dilation[0]);
      const int64_t wo = conv_out(v.x[3], v.w[3], v.stride[1], v.padding[1], v.dilation[1]);
      const Shape y{v.x[0], v.w[0], ho, wo};
      OpCase c = new_case(op, v.note);
      if (op == INGOT_OP_CONV2D) {
        c.inputs = {make_input(v.x, dt, next_seed(op)), make_input(v.w, dt, next_seed(op))};
        if (v.bias) c.inputs.push_back(make_input({v.w[0]}, dt, next_seed(op)));
        c.outputs = {{y, dt}};
        c.set_attr(conv_attr(v, v.bias));
        c.reduction = v.w[1] * v.w[2] * v.w[3];
      } else if (op == INGOT_OP_CONV2D_BWD_DATA) {  // (grad_y, w) -> grad_x
        c.inputs = {make_input(y, dt, next_seed(op)), make_input(v.w, dt, next_seed(op))};
        c.outputs = {{v.x, dt}};
        c.set_attr(conv_attr(v, false));
        c.reduction = (v.w[0] / v.groups) * v.w[2] * v.w[3];
      } else {  // CONV2D_BWD_WEIGHT: (x, grad_y) -> grad_w
        c.inputs = {make_input(v.x, dt, next_seed(op)), make_input(y, dt, next_seed(op))};
        c.outputs = {{v.w, dt}};
        c.set_attr(conv_attr(v, false));
        c.reduction = y[0] * y[2] * y[3];
      }
      if (v.winograd && dt == DType::F32) c.tolerance = 1e-4;  // transforms round at each stage
      cases.push_back(std::move(c));
    }
    if (op == INGOT_OP_CONV2D) {  // strided views of x
      const Conv v{{2, 3, 6, 5}, {4, 3, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, false, INGOT_ACT_NONE, ""};
      for (Layout l : {Layout::Transposed, Layout::Offset}) {
        OpCase c = new_case(op, std::string("x ") + layout_name(l));
        c.inputs = {make_input(v.x, dt, next_seed(op), l), make_input(v.w, dt, next_seed(op))};
        c.outputs = {{{2, 4, 6, 5}, dt}};
        c.set_attr(conv_attr(v, false));
        c.reduction = 27;
        cases.push_back(std::move(c));
      }
    }
  }
  return cases;
}

}  // namespace ingot::conformance
