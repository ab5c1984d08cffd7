// Shape and indexing cases: CONCAT, PAD, GATHER, INDEX_SELECT, SCATTER_ADD, and the order ops
// SORT and TOPK (inputs distinct along the axis, so that values and indices are unique).
#include "op_case.h"

namespace ingot::conformance {

namespace {

Tensor data(const Shape& shape, DType dt, uint64_t seed, Layout layout = Layout::Contiguous) {
  const Range r = default_range(dt);
  return make_input(shape, dt, seed, layout, r.lo, r.hi);
}

void axis_attr(OpCase& c, int axis) {
  auto a = make_attr<ingot_attr_axis>();
  a.axis = axis;
  c.set_attr(a);
}

void concat(OpKind op, DType dt, CaseList& cases) {
  struct Cat {
    std::vector<Shape> parts;
    int axis;
    Layout first;
  };
  std::vector<Cat> cats = {{{{2, 3}, {2, 5}, {2, 1}}, 1, Layout::Contiguous},
                           {{{4, 3}, {0, 3}, {17, 3}}, 0, Layout::Transposed},
                           {{{2, 3, 4}}, 2, Layout::Contiguous},
                           {{{2, 3, 4}, {2, 1, 4}}, -2, Layout::Strided},
                           {{{1003}, {33}}, 0, Layout::Offset}};
  for (const Cat& k : cats) {
    OpCase c = new_case(op, "axis " + std::to_string(k.axis));
    Shape out = k.parts[0];
    const int ax = k.axis < 0 ? k.axis + out.size() : k.axis;
    out[ax] = 0;
    for (size_t i = 0; i < k.parts.size(); ++i) {
      c.inputs.push_back(data(k.parts[i], dt, next_seed(op), i == 0 ? k.first : Layout::Contiguous));
      out[ax] += k.parts[i][ax];
    }
    c.outputs = {{out, dt}};
    axis_attr(c, k.axis);
    cases.push_back(std::move(c));
  }
}

void pad(OpKind op, DType dt, CaseList& cases) {
  struct Pad {
    Shape in;
    std::vector<int64_t> pads;
    Layout layout;
  };
  std::vector<Pad> pads = {{{3, 4}, {1, 2, 0, 3}, Layout::Contiguous},
                           {{2, 3, 5}, {0, 0, 2, 1, 1, 1}, Layout::Transposed},
                           {{17}, {0, 0}, Layout::Strided},
                           {{0, 3}, {1, 1, 0, 0}, Layout::Contiguous},
                           {{2, 1, 4, 4}, {0, 0, 0, 0, 1, 1, 2, 2}, Layout::Offset}};
  for (const Pad& p : pads) {
    OpCase c = new_case(op, layout_name(p.layout));
    c.inputs = {data(p.in, dt, next_seed(op), p.layout)};
    Shape out = p.in;
    auto a = make_attr<ingot_attr_pad>();
    for (int d = 0; d < p.in.size(); ++d) {
      a.pads[2 * d] = p.pads[2 * d], a.pads[2 * d + 1] = p.pads[2 * d + 1];
      out[d] += p.pads[2 * d] + p.pads[2 * d + 1];
    }
    a.value = dt == DType::Bool ? 1.0 : (is_floating(dt) ? 0.5 : 3.0);
    c.set_attr(a);
    c.outputs = {{out, dt}};
    cases.push_back(std::move(c));
  }
}

// GATHER: out[i][j] = x[index[i][j]][j] (axis 0) like torch.gather; index.shape <= x.shape.
void gather(OpKind op, DType dt, CaseList& cases) {
  struct G {
    Shape x, index;
    int axis;
    Layout layout;
  };
  std::vector<G> gs = {{{4, 5}, {4, 3}, 1, Layout::Contiguous},
                       {{6, 4}, {9, 4}, 0, Layout::Transposed},
                       {{3, 4, 5}, {2, 4, 5}, -2, Layout::Strided}};
  for (const G& g : gs) {
    OpCase c = new_case(op, "axis " + std::to_string(g.axis) + ", " + layout_name(g.layout));
    const int ax = g.axis < 0 ? g.axis + g.x.size() : g.axis;
    c.inputs = {data(g.x, dt, next_seed(op), g.layout), random_indices(g.index, g.x[ax], next_seed(op))};
    c.outputs = {{g.index, dt}};
    axis_attr(c, g.axis);
    cases.push_back(std::move(c));
  }
}

void index_select(OpKind op, DType dt, CaseList& cases) {
  struct S {
    Shape x;
    int64_t n;
    int axis;
    Layout layout;
  };
  std::vector<S> ss = {
      {{5, 4}, 3, 0, Layout::Contiguous}, {{3, 6}, 8, 1, Layout::Transposed}, {{2, 7, 3}, 0, 1, Layout::Contiguous}};
  for (const S& s : ss) {
    OpCase c = new_case(op, "axis " + std::to_string(s.axis) + ", " + layout_name(s.layout));
    c.inputs = {data(s.x, dt, next_seed(op), s.layout), random_indices({s.n}, s.x[s.axis], next_seed(op))};
    Shape out = s.x;
    out[s.axis] = s.n;
    c.outputs = {{out, dt}};
    axis_attr(c, s.axis);
    cases.push_back(std::move(c));
  }
}

// SCATTER_ADD(self, index, src): out = self, then out[index[i][j]][j] += src[i][j] (axis 0).
void scatter_add(OpKind op, DType dt, CaseList& cases) {
  struct S {
    Shape self, index;
    int axis;
  };
  std::vector<S> ss = {{{5, 4}, {3, 4}, 0}, {{4, 6}, {4, 9}, 1}, {{3, 4, 5}, {3, 2, 5}, -2}};
  for (const S& s : ss) {
    OpCase c = new_case(op, "axis " + std::to_string(s.axis));
    const int ax = s.axis < 0 ? s.axis + s.self.size() : s.axis;
    c.inputs = {data(s.self, dt, next_seed(op)), random_indices(s.index, s.self[ax], next_seed(op)),
                data(s.index, dt, next_seed(op))};
    c.outputs = {{s.self, dt}};
    axis_attr(c, s.axis);
    c.reduction = s.index[ax];  // duplicates add up in an unspecified order
    cases.push_back(std::move(c));
  }
}

}  // namespace

CaseList shape_cases(OpKind op) {
  CaseList cases;
  for (DType dt : table_dtypes(op)) {
    switch (op) {
      case INGOT_OP_CONCAT:
        concat(op, dt, cases);
        break;
      case INGOT_OP_PAD:
        pad(op, dt, cases);
        break;
      case INGOT_OP_GATHER:
        gather(op, dt, cases);
        break;
      case INGOT_OP_INDEX_SELECT:
        index_select(op, dt, cases);
        break;
      default:
        scatter_add(op, dt, cases);
        break;
    }
  }
  return cases;
}

CaseList order_cases(OpKind op) {
  struct O {
    Shape shape;
    int axis;
    bool flag;  // SORT: descending; TOPK: largest
    int64_t k;
    bool transposed;
  };
  CaseList cases;
  for (DType dt : table_dtypes(op)) {
    std::vector<O> os = {{{4, 9}, 1, false, 3, false},
                         {{4, 9}, -1, true, 9, false},
                         {{7, 5}, 0, true, 1, true},
                         {{3, 1}, 1, false, 1, false},
                         {{2, 3, 33}, 1, false, 2, false}};
    if (holds_1003_distinct(dt)) os.push_back({{1003}, 0, true, 17, false});
    for (const O& o : os) {
      const int ax = o.axis < 0 ? o.axis + o.shape.size() : o.axis;
      Tensor x = distinct_along(o.shape, dt, next_seed(op), ax);
      if (o.transposed) x = distinct_along({o.shape[1], o.shape[0]}, dt, next_seed(op), 1 - ax).transpose(0, 1);
      Shape out = o.shape;
      if (op == INGOT_OP_TOPK) out[ax] = o.k;
      OpCase c = new_case(op, "axis " + std::to_string(o.axis) + (o.flag ? ", descending" : ", ascending") +
                                  (o.transposed ? ", transposed" : ""));
      c.inputs = {x};
      c.outputs = {{out, dt}, {out, DType::I64}};
      if (op == INGOT_OP_SORT) {
        auto a = make_attr<ingot_attr_sort>();
        a.axis = o.axis, a.descending = o.flag ? 1 : 0, a.stable = o.k % 2 == 1 ? 1 : 0;
        c.set_attr(a);
      } else {
        auto a = make_attr<ingot_attr_topk>();
        a.axis = o.axis, a.largest = o.flag ? 1 : 0, a.k = o.k, a.sorted = 1;
        c.set_attr(a);
      }
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

}  // namespace ingot::conformance
