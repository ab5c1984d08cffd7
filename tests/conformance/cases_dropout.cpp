// DROPOUT cases: the keep mask is the Philox Bernoulli draw with probability 1 - p and the
// output x * keep * float(1 / (1 - p)), so every backend must match the reference bit for bit.
#include <fmt/format.h>

#include "op_case.h"

namespace ingot::conformance {

CaseList dropout_cases(OpKind op) {
  struct D {
    Shape shape;
    Layout layout;
    uint64_t offset;
    double p;
  };
  const std::vector<D> ds = {
      {{1003}, Layout::Contiguous, 0, 0.3},
      {{2, 3, 5}, Layout::Transposed, 7, 0.5},
      {{17}, Layout::Strided, 1, 0.1},
      {{}, Layout::Contiguous, 3, 0.5},
      {{0}, Layout::Contiguous, 0, 0.5},
      {{4, 33}, Layout::Offset, 1u << 20, 0.9},
      {{3, 1, 5}, Layout::Contiguous, 2, 0.0},
      {{33}, Layout::Contiguous, 5, 1.0},
      {{3, 17}, Layout::Expanded, 11, 0.25},
      {{70001}, Layout::Contiguous, 9, 0.2},  // past a thread's share on a parallel backend, not a multiple of 4
  };
  CaseList cases;
  for (DType dt : table_dtypes(op)) {
    for (const D& d : ds) {
      OpCase c = new_case(op, fmt::format("p {} offset {} {}", d.p, d.offset, layout_name(d.layout)));
      auto a = make_attr<ingot_attr_rng>();
      a.seed = 0xd409u + d.offset;
      a.offset = d.offset;
      a.a = d.p;
      c.set_attr(a);
      c.inputs = {make_input(d.shape, dt, next_seed(op), d.layout, -2.0, 2.0)};
      c.outputs = {{d.shape, dt}, {d.shape, DType::Bool}};
      c.tolerance = 0.0;
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

}  // namespace ingot::conformance
