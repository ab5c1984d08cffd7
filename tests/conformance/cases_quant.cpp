// Quantized op cases: QUANTIZE (per tensor and per channel, exact .5 ties, clamping to a narrowed
// range), DEQUANTIZE, QLINEAR and QCONV2D (u8 / i8 inputs, per-tensor or per-channel weights, each
// output kind, bias, ReLU, a small CNN's convolutions, accumulators far beyond 2^16), and max
// pooling of quantized values with ties. QUANTIZE, DEQUANTIZE and i32 outputs are exact;
// requantized outputs may differ by 1 (backends fold the scales in different orders).
#include <algorithm>
#include <cmath>

#include "op_case.h"

namespace ingot::conformance {

namespace {

// Scale and zero-point tensors of one case: [1] (per tensor) or [channels].
struct QP {
  std::vector<float> scale;
  std::vector<int32_t> zero_point;
};

Tensor scale_tensor(const QP& q) { return Tensor::from_vector(q.scale, Shape{static_cast<int64_t>(q.scale.size())}); }
Tensor zp_tensor(const QP& q) {
  return Tensor::from_vector(q.zero_point, Shape{static_cast<int64_t>(q.zero_point.size())});
}

// `n` scales around `base` (distinct per channel, powers of two apart from a few) and zero points
// cycling through `zps`.
QP per_channel(int64_t n, float base, std::vector<int32_t> zps) {
  QP q;
  for (int64_t i = 0; i < n; ++i) {
    q.scale.push_back(base * (1.0f + 0.25f * static_cast<float>(i % 5)));
    q.zero_point.push_back(zps[static_cast<size_t>(i) % zps.size()]);
  }
  return q;
}

ingot_attr_quantize quant_attr(int axis, int32_t lo, int32_t hi) {
  auto a = make_attr<ingot_attr_quantize>();
  a.axis = axis;
  a.quant_min = lo;
  a.quant_max = hi;
  return a;
}

int32_t lo_of(DType t) { return t == DType::U8 ? 0 : -128; }
int32_t hi_of(DType t) { return t == DType::U8 ? 255 : 127; }

// x in [lo, hi] with every 7th element an exact .5 tie of `tie_scale` (a power of two); a
// transposed view of the last two dims on request.
Tensor with_ties(const Shape& shape, DType dt, uint64_t seed, bool transposed, double lo, double hi, float tie_scale) {
  const int n = shape.size();
  Shape stored = shape;
  if (transposed) std::swap(stored[n - 2], stored[n - 1]);
  Tensor x = make_input(stored, DType::F32, seed, Layout::Contiguous, lo, hi).contiguous();
  float* p = x.data<float>();
  for (int64_t i = 0; i < x.numel(); i += 7) p[i] = (static_cast<float>(i % 11) - 5.5f) * tie_scale;
  x = x.to(dt);
  return transposed ? x.transpose(n - 2, n - 1) : x;
}

void quantize_cases(OpKind op, DType dt, CaseList& cases) {
  struct Q {
    Shape shape;
    DType out;
    int axis;
    bool per_channel;
    int32_t lo, hi;
    bool transposed;
    const char* note;
  };
  const std::vector<Q> qs = {{{3, 17}, DType::U8, 0, false, 0, 255, false, "u8 per tensor, ties, clamping"},
                             {{5, 9}, DType::I8, 0, false, -128, 127, true, "i8 per tensor, transposed x"},
                             {{4, 33}, DType::I8, 0, false, -100, 90, false, "i8 narrowed range"},
                             {{4, 5, 3}, DType::I8, 0, true, -128, 127, false, "i8 per channel, axis 0"},
                             {{2, 6, 3, 3}, DType::U8, 1, true, 0, 255, false, "u8 per channel, axis 1"},
                             {{3, 7}, DType::U8, -1, true, 0, 127, false, "u8 per channel, axis -1, 7-bit range"},
                             {{0, 4}, DType::U8, 0, false, 0, 255, false, "empty"}};
  for (const Q& q : qs) {
    OpCase c = new_case(op, q.note);
    const int axis = q.axis < 0 ? q.axis + q.shape.size() : q.axis;
    const bool u8 = q.out == DType::U8;
    const QP p = q.per_channel
                     ? per_channel(q.shape[axis], 0.0625f,
                                   u8 ? std::vector<int32_t>{128, 100, 131, 0} : std::vector<int32_t>{0, 3, -2, 7})
                     : QP{{0.03125f}, {u8 ? 128 : -3}};
    c.inputs = {with_ties(q.shape, dt, next_seed(op), q.transposed, -6.0, 6.0, p.scale[0]), scale_tensor(p),
                zp_tensor(p)};
    c.outputs = {{q.shape, q.out}};
    c.set_attr(quant_attr(q.axis, q.lo, q.hi));
    cases.push_back(std::move(c));
  }
}

void dequantize_cases(OpKind op, DType dt, CaseList& cases) {
  // i32 / i64 values stay below 2^24 so that (q - zp) * scale is one exact f32 rounding everywhere
  const bool wide = dt == DType::I32 || dt == DType::I64;
  const int64_t lo = wide ? -5000000 : (dt == DType::U8 ? 0 : -128),
                hi = wide ? 5000000 : (dt == DType::U8 ? 255 : 127);
  const int32_t zp = wide ? 0 : (dt == DType::U8 ? 131 : -7);
  struct D {
    Shape shape;
    int axis;
    bool per_channel;
    const char* note;
  };
  const std::vector<D> ds = {{{5, 19}, 0, false, "per tensor"},
                             {{6, 4, 3}, 0, true, "per channel, axis 0"},
                             {{2, 5, 4, 3}, 1, true, "per channel, axis 1"},
                             {{4, 9}, -1, true, "per channel, axis -1 (an accumulator's columns)"}};
  for (const D& d : ds) {
    OpCase c = new_case(op, d.note);
    const int axis = d.axis < 0 ? d.axis + d.shape.size() : d.axis;
    QP p = d.per_channel ? per_channel(d.shape[axis], 0.0123f, {zp, zp + 1, zp - 1}) : QP{{0.0123f}, {zp}};
    c.inputs = {small_ints(d.shape, dt, next_seed(op), lo, hi), scale_tensor(p), zp_tensor(p)};
    c.outputs = {{d.shape, DType::F32}};
    c.set_attr(quant_attr(d.axis, lo_of(DType::U8), hi_of(DType::U8)));
    c.tolerance = 0.0;
    cases.push_back(std::move(c));
  }
}

// One QLINEAR / QCONV2D call: operand values, parameters and the output kind.
struct QMm {
  Shape x, w;  // QLINEAR: x [..., K], w [N, K]; QCONV2D: x NCHW, w OIHW
  bool w_per_channel = true;
  DType out = DType::F32;
  bool bias = false;
  int32_t act = INGOT_ACT_NONE;
  bool large = false;  // operands near their maxima: |acc| >> 2^16
  int64_t stride = 1, padding = 0, dilation = 1, groups = 1;
  const char* note = "";
};

// Appends the inputs after x and w, the output and the tolerance of a quantized matmul / conv.
void finish(OpCase& c, const QMm& m, DType xt, int64_t channels, int64_t reduction, const Shape& y) {
  OpKind op = c.op;
  const QP xq{{m.large ? 0.002f : 0.05f}, {m.large ? 0 : (xt == DType::U8 ? 120 : -4)}};
  const QP wq = m.w_per_channel ? per_channel(channels, m.large ? 0.001f : 0.02f, {0, 0, 2, -1})
                                : QP{{0.015f}, {m.large ? 0 : 1}};
  c.inputs.insert(c.inputs.begin() + 1, {scale_tensor(xq), zp_tensor(xq)});
  c.inputs.insert(c.inputs.end(), {scale_tensor(wq), zp_tensor(wq)});
  if (m.bias) c.inputs.push_back(make_input({channels}, DType::F32, next_seed(op), Layout::Contiguous, -2.0, 2.0));
  if (m.out == DType::U8 || m.out == DType::I8) {
    // an output scale that maps the typical result over most of the range, so rounding matters
    const float ys = m.large ? 0.05f : 0.1f * std::sqrt(static_cast<float>(reduction));
    const QP yq{{ys}, {m.out == DType::U8 ? (m.act == INGOT_ACT_RELU ? 0 : 128) : 3}};
    c.inputs.push_back(scale_tensor(yq));
    c.inputs.push_back(zp_tensor(yq));
    c.tolerance = 1.0;  // an absolute difference of 1 in the quantized value
  }
  c.outputs = {{y, m.out}};
  c.reduction = reduction;
}

Tensor q_input(const Shape& s, DType dt, uint64_t seed, bool large, Layout layout = Layout::Contiguous) {
  if (large) return make_input(s, dt, seed, layout, dt == DType::U8 ? 200 : 100, dt == DType::U8 ? 255 : 127);
  return make_input(s, dt, seed, layout, dt == DType::U8 ? 0 : -128, dt == DType::U8 ? 255 : 127);
}

Tensor q_weight(const Shape& s, uint64_t seed, bool large) {
  return make_input(s, DType::I8, seed, Layout::Contiguous, large ? 100 : -127, 127);
}

void qlinear_cases(OpKind op, DType dt, CaseList& cases) {
  std::vector<QMm> ms = {
      {{5, 33}, {17, 33}, false, DType::F32, true, INGOT_ACT_NONE, false, 1, 0, 1, 1, "per-tensor w, f32, bias"},
      {{7, 40}, {9, 40}, true, DType::F32, true, INGOT_ACT_RELU, false, 1, 0, 1, 1, "per-channel w, f32, bias, relu"},
      {{6, 24}, {10, 24}, true, DType::I32, false, INGOT_ACT_NONE, false, 1, 0, 1, 1, "i32"},
      {{8, 64}, {12, 64}, true, DType::U8, true, INGOT_ACT_RELU, false, 1, 0, 1, 1, "requantized u8, bias, relu"},
      {{3, 31}, {5, 31}, false, DType::I8, true, INGOT_ACT_NONE, false, 1, 0, 1, 1, "requantized i8, bias"},
      {{2, 3, 20}, {6, 20}, true, DType::F32, false, INGOT_ACT_NONE, false, 1, 0, 1, 1, "leading batch dims"},
      {{4, 1100}, {6, 1100}, true, DType::I32, false, INGOT_ACT_NONE, true, 1, 0, 1, 1, "K 1100, |acc| >> 2^16"},
      {{4, 1100}, {6, 1100}, true, DType::F32, true, INGOT_ACT_NONE, true, 1, 0, 1, 1, "K 1100, f32"},
      {{32, 256},
       {10, 256},
       true,
       DType::U8,
       true,
       INGOT_ACT_NONE,
       false,
       1,
       0,
       1,
       1,
       "a CNN's classifier, requantized u8"},
      {{0, 8}, {3, 8}, true, DType::F32, false, INGOT_ACT_NONE, false, 1, 0, 1, 1, "M = 0"}};
  for (size_t i = 0; i < ms.size(); ++i) {
    const QMm& m = ms[i];
    OpCase c = new_case(op, m.note);
    const Layout layout = i == 1 ? Layout::Transposed : Layout::Contiguous;
    c.inputs = {q_input(m.x, dt, next_seed(op), m.large, layout), q_weight(m.w, next_seed(op), m.large)};
    if (i == 1) c.note += ", transposed x";
    Shape y = m.x;
    y[y.size() - 1] = m.w[0];
    finish(c, m, dt, m.w[0], m.w[1], y);
    auto a = make_attr<ingot_attr_matmul>();
    a.has_bias = m.bias ? 1 : 0;
    a.activation = m.act;
    c.set_attr(a);
    cases.push_back(std::move(c));
  }
}

void qconv_cases(OpKind op, DType dt, CaseList& cases) {
  std::vector<QMm> ms = {
      {{2, 3, 9, 9}, {8, 3, 3, 3}, true, DType::F32, true, INGOT_ACT_RELU, false, 1, 1, 1, 1, "3x3 pad 1, f32, relu"},
      {{1, 8, 10, 10},
       {16, 8, 3, 3},
       true,
       DType::U8,
       true,
       INGOT_ACT_RELU,
       false,
       2,
       1,
       1,
       1,
       "stride 2 pad 1, requantized u8, relu"},
      {{1, 4, 7, 7}, {6, 2, 3, 3}, true, DType::I32, false, INGOT_ACT_NONE, false, 1, 1, 1, 2, "groups 2, i32"},
      {{2, 16, 5, 5},
       {12, 16, 1, 1},
       false,
       DType::I8,
       true,
       INGOT_ACT_NONE,
       false,
       1,
       0,
       1,
       1,
       "1x1, per-tensor w, requantized i8"},
      {{1, 3, 9, 9}, {4, 3, 3, 3}, true, DType::F32, false, INGOT_ACT_NONE, false, 1, 2, 2, 1, "dilation 2, pad 2"},
      {{1, 6, 6, 6}, {6, 1, 3, 3}, true, DType::F32, true, INGOT_ACT_NONE, false, 1, 1, 1, 6, "depthwise"},
      {{1, 64, 6, 6},
       {4, 64, 5, 5},
       true,
       DType::I32,
       false,
       INGOT_ACT_NONE,
       true,
       1,
       2,
       1,
       1,
       "K 1600, |acc| >> 2^16, pad 2"},
      {{4, 16, 14, 14},
       {32, 16, 3, 3},
       true,
       DType::U8,
       true,
       INGOT_ACT_RELU,
       false,
       1,
       1,
       1,
       1,
       "a CNN's second conv, requantized u8"}};
  for (const QMm& m : ms) {
    OpCase c = new_case(op, m.note);
    c.inputs = {q_input(m.x, dt, next_seed(op), m.large), q_weight(m.w, next_seed(op), m.large)};
    const auto out = [&](int64_t in, int64_t k) {
      return (in + 2 * m.padding - m.dilation * (k - 1) - 1) / m.stride + 1;
    };
    const Shape y{m.x[0], m.w[0], out(m.x[2], m.w[2]), out(m.x[3], m.w[3])};
    finish(c, m, dt, m.w[0], m.w[1] * m.w[2] * m.w[3], y);
    auto a = make_attr<ingot_attr_conv2d>();
    for (int i = 0; i < 2; ++i) a.stride[i] = m.stride, a.padding[i] = m.padding, a.dilation[i] = m.dilation;
    a.groups = m.groups;
    a.has_bias = m.bias ? 1 : 0;
    a.activation = m.act;
    c.set_attr(a);
    cases.push_back(std::move(c));
  }
}

}  // namespace

CaseList quantized_cases(OpKind op) {
  CaseList cases;
  for (DType dt : table_dtypes(op)) {
    if (op == INGOT_OP_QUANTIZE) quantize_cases(op, dt, cases);
    if (op == INGOT_OP_DEQUANTIZE) dequantize_cases(op, dt, cases);
    if (op == INGOT_OP_QLINEAR) qlinear_cases(op, dt, cases);
    if (op == INGOT_OP_QCONV2D) qconv_cases(op, dt, cases);
  }
  return cases;
}

CaseList quantized_pool_cases(OpKind op) {
  CaseList cases;
  if (op != INGOT_OP_MAX_POOL2D) return cases;
  for (DType dt : {DType::U8, DType::I8})
    for (int values_only : {0, 1}) {
      // few distinct values: windows hold ties, as quantized activations do (only y is compared);
      // values only (indices_unused) is what inference asks for, and what a backend may run alone
      OpCase c = new_case(op, values_only ? "quantized values with ties, 3x3 stride 2 pad 1, values only"
                                          : "quantized values with ties, 3x3 stride 2 pad 1");
      const Shape x{2, 8, 9, 9}, y{2, 8, 5, 5};
      c.inputs = {small_ints(x, dt, next_seed(op), dt == DType::U8 ? 250 : -128, dt == DType::U8 ? 255 : -124)};
      c.outputs = {{y, dt}, {y, DType::I64}};
      c.compared_outputs = {0};
      auto a = make_attr<ingot_attr_pool2d>();
      for (int i = 0; i < 2; ++i) a.kernel[i] = 3, a.stride[i] = 2, a.padding[i] = 1;
      a.count_include_pad = 1;
      a.indices_unused = values_only;
      c.set_attr(a);
      cases.push_back(std::move(c));
    }
  return cases;
}

}  // namespace ingot::conformance
