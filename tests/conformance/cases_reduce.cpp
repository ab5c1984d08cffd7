// Reduction cases (SUM/MEAN/MAX/MIN to an output shape, ARGMAX along an axis) and the softmax
// family. Tolerances scale with the reduction length; integer sums stay inside the dtype.
#include "op_case.h"

namespace ingot::conformance {

namespace {

struct Reduce {
  Shape in, out;
  Layout layout = Layout::Contiguous;
};

// Random shapes, each dim kept or reduced to 1; integer cases keep sums short (no i8 overflow),
// MAX / MIN never reduce an empty dim (no identity).
std::vector<Reduce> random_reductions(OpKind op, DType dt, uint64_t seed) {
  std::vector<Reduce> r;
  uint64_t bits = seed * 0x9e3779b97f4a7c15ull;
  for (const Shape& in : random_shapes(seed, 4)) {
    Shape out = in;
    for (int d = 0; d < in.size(); ++d, bits >>= 1) out[d] = (bits & 1u) != 0 ? 1 : in[d];
    const int64_t k = out.numel() > 0 ? in.numel() / out.numel() : 0;
    const bool empty_lane = in.numel() == 0 && out.numel() > 0;
    if (is_integral(dt) && k > 100) continue;
    if (empty_lane && (op == INGOT_OP_MAX || op == INGOT_OP_MIN)) continue;
    r.push_back({in, out, r.size() % 2 == 0 ? Layout::Contiguous : Layout::Strided});
  }
  return r;
}

std::vector<Reduce> reduce_shapes(OpKind op, DType dt, uint64_t seed) {
  std::vector<Reduce> r = random_reductions(op, dt, seed);
  if (is_integral(dt)) {
    r.insert(r.end(), {{{4, 6, 5}, {4, 1, 5}}, {{4, 6, 5}, {1, 1, 1}}, {{6, 5}, {6, 1}, Layout::Transposed}});
    return r;
  }
  r.insert(r.end(), {{{4, 6, 5}, {4, 1, 5}},
                     {{1003}, {1}},
                     {{33, 17}, {1, 17}, Layout::Transposed},
                     {{4, 6, 5}, {1, 6, 5}},
                     {{4, 6, 5}, {4, 6, 1}},
                     {{4, 6, 5}, {1, 1, 1}},
                     {{4, 6, 5}, {4, 1, 1}},
                     {{4, 6, 5}, {4, 6, 5}},
                     {{33, 17}, {33, 1}, Layout::Transposed},
                     {{2, 3, 5}, {2, 1, 1}, Layout::Strided},
                     {{6, 17}, {1, 17}, Layout::Expanded},
                     {{5, 33}, {5, 1}, Layout::Offset},
                     {{}, {}},
                     {{1}, {1}},
                     {{0, 5}, {0, 1}}});
  // an empty reduction has a value for SUM (0) and MEAN (NaN) only
  if (op == INGOT_OP_SUM || op == INGOT_OP_MEAN) r.push_back({{0, 5}, {1, 5}});
  return r;
}

// Integer sums: values in {-1, 0, 1} ({0, 1} for u8) so that no case overflows an i8.
Range reduce_range(OpKind op, DType dt) {
  if (op == INGOT_OP_SUM && is_integral(dt)) return {dt == DType::U8 ? 0.0 : -1.0, 1.0};
  return default_range(dt);
}

// Distinct values along `axis`, stored transposed in memory when asked (rank 2 only).
Tensor distinct_input(const Shape& shape, DType dt, uint64_t seed, int axis, bool transposed) {
  if (!transposed || shape.size() != 2) return distinct_along(shape, dt, seed, axis);
  const int ax = axis < 0 ? axis + 2 : axis;
  return distinct_along({shape[1], shape[0]}, dt, seed, 1 - ax).transpose(0, 1);
}

}  // namespace

CaseList reduction_cases(OpKind op) {
  CaseList cases;
  for (DType dt : table_dtypes(op)) {
    if (op == INGOT_OP_ARGMAX) {
      struct Arg {
        Shape shape;
        int axis;
        bool transposed;
      };
      std::vector<Arg> args = {{{5, 7}, 1, false}, {{5, 7}, 0, true},   {{4, 6, 5}, -2, false},
                               {{5, 1}, 1, false}, {{1, 9}, -1, false}, {{}, 0, false}};
      if (holds_1003_distinct(dt)) args.push_back({{1003}, 0, false});
      for (const Arg& a : args) {
        OpCase c = new_case(op, "axis " + std::to_string(a.axis) + (a.transposed ? ", transposed" : ""));
        c.inputs = {distinct_input(a.shape, dt, next_seed(op), a.axis, a.transposed)};
        Shape out = a.shape;
        if (out.size() > 0) out[a.axis < 0 ? a.axis + out.size() : a.axis] = 1;
        c.outputs = {{out, DType::I64}};
        auto attr = make_attr<ingot_attr_axis>();
        attr.axis = a.axis;
        c.set_attr(attr);
        cases.push_back(std::move(c));
      }
      continue;
    }
    const Range r = reduce_range(op, dt);
    for (const Reduce& s : reduce_shapes(op, dt, next_seed(op))) {
      OpCase c = new_case(op, layout_name(s.layout));
      c.inputs = {make_input(s.in, dt, next_seed(op), s.layout, r.lo, r.hi)};
      c.outputs = {{s.out, dt}};
      c.reduction = s.out.numel() > 0 ? s.in.numel() / s.out.numel() : 1;
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

CaseList softmax_cases(OpKind op) {
  const bool backward = op == INGOT_OP_SOFTMAX_BWD || op == INGOT_OP_LOG_SOFTMAX_BWD;
  const bool log_form = op == INGOT_OP_LOG_SOFTMAX || op == INGOT_OP_LOG_SOFTMAX_BWD;
  struct Soft {
    Shape shape;
    int axis;
    Layout layout;
  };
  CaseList cases;
  for (DType dt : table_dtypes(op)) {
    std::vector<Soft> shapes = {
        {{4, 17}, 1, Layout::Contiguous}, {{7, 5}, 1, Layout::Transposed}, {{2, 3, 33}, -1, Layout::Contiguous},
        {{4, 17}, 0, Layout::Contiguous}, {{5, 1}, 1, Layout::Contiguous}, {{0, 5}, 1, Layout::Contiguous},
        {{1003}, 0, Layout::Contiguous},  {{3, 4, 5}, 1, Layout::Strided}, {{}, 0, Layout::Contiguous}};
    for (const Soft& s : shapes) {
      OpCase c = new_case(op, "axis " + std::to_string(s.axis) + ", " + layout_name(s.layout));
      if (backward) {
        // y as the forward would give it: probabilities, or log-probabilities
        const Range ry = log_form ? Range{-5.0, 0.0} : Range{0.0, 1.0};
        c.inputs = {make_input(s.shape, dt, next_seed(op), s.layout, ry.lo, ry.hi),
                    make_input(s.shape, dt, next_seed(op), Layout::Contiguous, -1.0, 1.0)};
      } else {
        c.inputs = {make_input(s.shape, dt, next_seed(op), s.layout, -4.0, 4.0)};
      }
      c.outputs = {{s.shape, dt}};
      auto attr = make_attr<ingot_attr_axis>();
      attr.axis = s.axis;
      c.set_attr(attr);
      c.reduction = s.shape.size() == 0 ? 1 : s.shape[s.axis < 0 ? s.axis + s.shape.size() : s.axis];
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

}  // namespace ingot::conformance
