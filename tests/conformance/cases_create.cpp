// Creation, copy and cast cases (ARANGE, FILL, COPY, CAST) and the Philox RNG ops: UNIFORM and
// BERNOULLI must be bit-identical on every backend, NORMAL within 1e-6 relative.
#include "op_case.h"

namespace ingot::conformance {

namespace {

void arange(OpKind op, DType dt, CaseList& cases) {
  const bool f = is_floating(dt);
  // unsigned and 8-bit types count up from a small start so that every value fits
  const double start = dt == DType::U8 ? 1.0 : (f ? -3.0 : -5.0);
  const double step = f ? 0.5 : 1.0;
  for (int64_t n : {int64_t{17}, int64_t{1}, int64_t{0}, int64_t{holds_1003_distinct(dt) ? 1003 : 33}}) {
    OpCase c = new_case(op, "n " + std::to_string(n));
    auto a = make_attr<ingot_attr_arange>();
    a.start = start, a.step = step;
    c.set_attr(a);
    c.outputs = {{{n}, dt}};
    cases.push_back(std::move(c));
  }
}

void fill(OpKind op, DType dt, CaseList& cases) {
  const double value = dt == DType::Bool ? 1.0 : (is_floating(dt) ? 2.5 : 7.0);
  for (const Shape& s : {Shape{17}, Shape{2, 3, 5}, Shape{}, Shape{0, 4}}) {
    OpCase c = new_case(op, "");
    auto a = make_attr<ingot_attr_scalar>();
    a.value = value;
    c.set_attr(a);
    c.outputs = {{s, dt}};
    cases.push_back(std::move(c));
  }
}

void copy(OpKind op, DType dt, CaseList& cases) {
  const Range r = default_range(dt);
  struct Cp {
    Shape shape;
    Layout layout;
  };
  std::vector<Cp> cps = {{{1003}, Layout::Contiguous}, {{5, 7}, Layout::Transposed},      {{9, 6}, Layout::Strided},
                         {{4, 33}, Layout::Offset},    {{6, 17}, Layout::Expanded},       {{}, Layout::Contiguous},
                         {{3, 0}, Layout::Contiguous}, {{2, 3, 4, 5}, Layout::Transposed}};
  for (const Cp& p : cps) {
    OpCase c = new_case(op, layout_name(p.layout));
    c.inputs = {make_input(p.shape, dt, next_seed(op), p.layout, r.lo, r.hi)};
    c.outputs = {{p.shape, dt}};
    cases.push_back(std::move(c));
  }
}

// Every source dtype to every dtype; values are non-negative so that float -> u8 is defined.
void cast(OpKind op, DType src, CaseList& cases) {
  for (int d = 0; d < kDTypeCount; ++d) {
    const auto dst = static_cast<DType>(d);
    const Layout layout = d % 2 == 0 ? Layout::Contiguous : Layout::Transposed;
    OpCase c = new_case(op, std::string("to ") + std::string(dtype_name(dst)) + ", " + layout_name(layout));
    const Range r = src == DType::Bool ? Range{0.0, 1.0} : Range{0.0, 100.0};
    c.inputs = {make_input({3, 11}, src, next_seed(op), layout, r.lo, r.hi)};
    c.outputs = {{{3, 11}, dst}};
    cases.push_back(std::move(c));
  }
}

void random(OpKind op, DType dt, CaseList& cases) {
  struct R {
    Shape shape;
    uint64_t offset;
  };
  std::vector<R> rs = {{{1003}, 0}, {{2, 3, 5}, 7}, {{17}, 1}, {{}, 3}, {{0}, 0}, {{4, 33}, 1u << 20}};
  for (const R& r : rs) {
    OpCase c = new_case(op, "offset " + std::to_string(r.offset));
    auto a = make_attr<ingot_attr_rng>();
    a.seed = 0x5eed0000u + r.offset;
    a.offset = r.offset;
    if (op == INGOT_OP_UNIFORM) a.a = -1.0, a.b = 2.0;
    if (op == INGOT_OP_BERNOULLI) a.a = 0.3;
    if (op == INGOT_OP_NORMAL) a.a = 1.0, a.b = 2.0;
    c.set_attr(a);
    c.outputs = {{r.shape, dt}};
    if (op != INGOT_OP_NORMAL) c.tolerance = 0.0;
    if (op == INGOT_OP_NORMAL && (dt == DType::F32 || dt == DType::F64)) c.tolerance = 1e-6;
    cases.push_back(std::move(c));
  }
}

}  // namespace

CaseList creation_cases(OpKind op) {
  CaseList cases;
  for (DType dt : table_dtypes(op)) {
    switch (op) {
      case INGOT_OP_ARANGE:
        arange(op, dt, cases);
        break;
      case INGOT_OP_FILL:
        fill(op, dt, cases);
        break;
      case INGOT_OP_COPY:
        copy(op, dt, cases);
        break;
      case INGOT_OP_CAST:
        cast(op, dt, cases);
        break;
      default:
        random(op, dt, cases);
        break;
    }
  }
  return cases;
}

}  // namespace ingot::conformance
