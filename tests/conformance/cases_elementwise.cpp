// Elementwise cases: unary math, binary arithmetic with broadcasting, comparisons, logical ops and
// WHERE. f32 gets the full sweep (SIMD tails, size-1, zero-size, 0-dim, every view kind); the
// other dtypes a tail, a view and a scalar, which keeps the suite fast.
#include "op_case.h"

namespace ingot::conformance {

namespace {

struct Layouted {
  Shape shape;
  Layout layout;
};

std::vector<Layouted> unary_shapes() {
  return {{{17}, Layout::Contiguous},      {{33}, Layout::Contiguous},      {{1003}, Layout::Contiguous},
          {{1}, Layout::Contiguous},       {{}, Layout::Contiguous},        {{0}, Layout::Contiguous},
          {{3, 0, 4}, Layout::Contiguous}, {{2, 3, 5}, Layout::Contiguous}, {{4, 1, 7}, Layout::Contiguous},
          {{5, 7}, Layout::Transposed},    {{9, 6}, Layout::Strided},       {{4, 33}, Layout::Offset},
          {{6, 17}, Layout::Expanded}};
}

Range unary_range(OpKind op, DType dt) {
  if (!is_floating(dt)) return default_range(dt);
  switch (op) {
    case INGOT_OP_LOG:
    case INGOT_OP_SQRT:
    case INGOT_OP_RSQRT:
      return {0.1, 4.0};
    case INGOT_OP_LOG1P:
      return {-0.9, 3.0};
    case INGOT_OP_RECIPROCAL:
      return {0.25, 4.0};
    case INGOT_OP_SOFTPLUS:
      return {-5.0, 25.0};
    default:
      return {-3.0, 3.0};
  }
}

// Variants of the attribute struct for the ops that have one (one entry = NULL attributes).
std::vector<std::pair<std::string, std::vector<unsigned char>>> unary_attrs(OpKind op, DType dt) {
  OpCase tmp;
  std::vector<std::pair<std::string, std::vector<unsigned char>>> out;
  if (op == INGOT_OP_SOFTPLUS) {
    auto a = make_attr<ingot_attr_softplus>();
    a.beta = 1.0, a.threshold = 20.0;
    tmp.set_attr(a), out.emplace_back("beta 1", tmp.attr);
    a.beta = 2.0, a.threshold = 10.0;
    tmp.set_attr(a), out.emplace_back("beta 2 threshold 10", tmp.attr);
  } else if (op == INGOT_OP_CLAMP) {
    const bool f = is_floating(dt);
    auto a = make_attr<ingot_attr_clamp>();
    a.has_min = 1, a.has_max = 1, a.min = f ? -0.5 : -3.0, a.max = f ? 0.75 : 4.0;
    tmp.set_attr(a), out.emplace_back("min and max", tmp.attr);
    a.has_max = 0;
    tmp.set_attr(a), out.emplace_back("min only", tmp.attr);
    a.has_min = 0, a.has_max = 1;
    tmp.set_attr(a), out.emplace_back("max only", tmp.attr);
  } else {
    out.emplace_back("", std::vector<unsigned char>{});
  }
  return out;
}

// Binary operand ranges that keep integer results in range (u8 subtraction stays >= 0).
std::pair<Range, Range> binary_ranges(OpKind op, DType dt) {
  if (op == INGOT_OP_DIV) return {{-2.0, 2.0}, {0.5, 2.0}};
  if (op == INGOT_OP_POW) return {{0.25, 3.0}, {-2.0, 2.0}};
  if (op == INGOT_OP_SUB && dt == DType::U8) return {{10.0, 20.0}, {0.0, 10.0}};
  return {default_range(dt), default_range(dt)};
}

struct Pair {
  Shape a, b;
  Layout la = Layout::Contiguous, lb = Layout::Contiguous;
  const char* note = "";
};

std::vector<Pair> binary_shapes() {
  return {{{1003}, {1003}, Layout::Contiguous, Layout::Contiguous, "tail"},
          {{4, 1, 5}, {3, 1}, Layout::Contiguous, Layout::Contiguous, "broadcast"},
          {{6, 9}, {6, 9}, Layout::Transposed, Layout::Contiguous, "transposed a"},
          {{17}, {17}, Layout::Contiguous, Layout::Contiguous, ""},
          {{33}, {33}, Layout::Contiguous, Layout::Contiguous, ""},
          {{2, 3, 5}, {2, 3, 5}, Layout::Contiguous, Layout::Contiguous, ""},
          {{4, 1, 5}, {1, 3, 5}, Layout::Contiguous, Layout::Contiguous, "broadcast both"},
          {{2, 3, 4}, {4}, Layout::Contiguous, Layout::Contiguous, "broadcast row"},
          {{}, {3, 17}, Layout::Contiguous, Layout::Contiguous, "0-dim a"},
          {{3, 17}, {}, Layout::Contiguous, Layout::Contiguous, "0-dim b"},
          {{}, {}, Layout::Contiguous, Layout::Contiguous, "0-dim both"},
          {{0, 3}, {1, 3}, Layout::Contiguous, Layout::Contiguous, "zero-size"},
          {{1}, {1}, Layout::Contiguous, Layout::Contiguous, ""},
          {{8, 33}, {8, 33}, Layout::Strided, Layout::Offset, "strided a, offset b"},
          {{5, 17}, {5, 17}, Layout::Contiguous, Layout::Expanded, "expanded b"},
          {{7, 5}, {7, 5}, Layout::Transposed, Layout::Transposed, "both transposed"}};
}

}  // namespace

CaseList unary_cases(OpKind op) {
  CaseList cases;
  for (DType dt : table_dtypes(op)) {
    const Range r = unary_range(op, dt);
    for (const auto& [attr_note, attr] : unary_attrs(op, dt)) {
      std::vector<Layouted> shapes = unary_shapes();
      const Layout kinds[] = {Layout::Contiguous, Layout::Transposed, Layout::Strided, Layout::Offset};
      for (const Shape& s : random_shapes(next_seed(op), 4)) shapes.push_back({s, kinds[shapes.size() % 4]});
      for (const Layouted& s : shapes) {
        OpCase c = new_case(
            op, attr_note.empty() ? std::string(layout_name(s.layout)) : attr_note + ", " + layout_name(s.layout));
        c.inputs = {make_input(s.shape, dt, next_seed(op), s.layout, r.lo, r.hi)};
        c.outputs = {{s.shape, dt}};
        c.attr = attr;
        cases.push_back(std::move(c));
      }
    }
    if (op == INGOT_OP_ROUND || op == INGOT_OP_FLOOR || op == INGOT_OP_CEIL) {
      // exact halves: round is half-to-even like torch.round
      std::vector<double> halves;
      for (int i = -12; i <= 12; ++i) halves.push_back(0.5 * i);
      OpCase c = new_case(op, "exact halves");
      c.inputs = {Tensor::from_vector(halves, {25}).to(dt)};
      c.outputs = {{{25}, dt}};
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

CaseList binary_cases(OpKind op) {
  CaseList cases;
  for (DType dt : table_dtypes(op)) {
    const auto [ra, rb] = binary_ranges(op, dt);
    std::vector<Pair> pairs = binary_shapes();
    for (const Shape& s : random_shapes(next_seed(op), 4)) {
      const Shape b = broadcastable_to(s, next_seed(op));
      pairs.push_back(pairs.size() % 2 == 0 ? Pair{s, b, Layout::Contiguous, Layout::Contiguous, "random broadcast"}
                                            : Pair{b, s, Layout::Strided, Layout::Contiguous, "random broadcast"});
    }
    for (const Pair& p : pairs) {
      OpCase c = new_case(op, p.note);
      c.inputs = {make_input(p.a, dt, next_seed(op), p.la, ra.lo, ra.hi),
                  make_input(p.b, dt, next_seed(op), p.lb, rb.lo, rb.hi)};
      c.outputs = {{broadcast_shapes(p.a, p.b), dt}};
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

CaseList logic_cases(OpKind op) {
  CaseList cases;
  for (DType dt : table_dtypes(op)) {
    const int64_t lo = dt == DType::U8 || dt == DType::Bool ? 0 : -2;
    const int64_t hi = dt == DType::Bool ? 1 : 2;
    for (const Pair& p : binary_shapes()) {
      OpCase c = new_case(op, p.note);
      const Tensor a = make_input(p.a, dt, next_seed(op), p.la, double(lo), double(hi), true);
      const Tensor b = make_input(p.b, dt, next_seed(op), p.lb, double(lo), double(hi), true);
      if (op == INGOT_OP_LOGICAL_NOT) {
        c.inputs = {a};
        c.outputs = {{p.a, DType::Bool}};
      } else if (op == INGOT_OP_WHERE) {
        // the condition broadcasts too: give it its own shape from the pair
        const Shape cond_shape = p.b.size() <= p.a.size() ? p.b : p.a;
        c.inputs = {small_ints(cond_shape, DType::Bool, next_seed(op), 0, 1), a, b};
        c.outputs = {{broadcast_shapes(cond_shape, broadcast_shapes(p.a, p.b)), dt}};
      } else {
        c.inputs = {a, b};
        c.outputs = {{broadcast_shapes(p.a, p.b), DType::Bool}};
      }
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

CaseList relu_bwd_cases(OpKind op) {
  // Same shapes on every input; layouts mixed so that a backend meets views on either side.
  struct Shaped {
    Shape shape;
    Layout grad, x;
    const char* note;
  };
  const std::vector<Shaped> shapes{{{17}, Layout::Contiguous, Layout::Contiguous, "17"},
                                   {{33}, Layout::Strided, Layout::Contiguous, "33 strided grad"},
                                   {{1003}, Layout::Contiguous, Layout::Offset, "1003 offset x"},
                                   {{4, 1, 3, 5}, Layout::Contiguous, Layout::Contiguous, "4-d"},
                                   {{2, 16, 4, 4}, Layout::Transposed, Layout::Transposed, "transposed"},
                                   {{0, 4}, Layout::Contiguous, Layout::Contiguous, "zero-size"},
                                   {{}, Layout::Contiguous, Layout::Contiguous, "0-dim"}};
  CaseList cases;
  for (DType dt : table_dtypes(op)) {
    for (const Shaped& s : shapes) {
      OpCase c = new_case(op, s.note);
      c.inputs = {make_input(s.shape, dt, next_seed(op), s.grad, -2.0, 2.0),
                  make_input(s.shape, dt, next_seed(op), s.x, -1.0, 1.0)};
      if (op == INGOT_OP_ADD_RELU_BWD)  // (grad_a, grad_b, y): a second gradient, dense
        c.inputs.insert(c.inputs.begin() + 1, make_input(s.shape, dt, next_seed(op), Layout::Contiguous, -2.0, 2.0));
      c.outputs = {{s.shape, dt}};
      if (op == INGOT_OP_RELU_BWD) c.tolerance = 0.0;  // a selection: bit-exact
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

}  // namespace ingot::conformance
