// SCALED_DOT_PRODUCT_ATTENTION and its backward, and the fused CROSS_ENTROPY pair: causal (both
// alignments), bool and additive masks that broadcast, odd T and D, Tq != Tk, a row that sees no
// key, dropout (the keep draws must match the reference's exactly), strided q / k / v.
#include <fmt/format.h>

#include <cmath>

#include "ingot/runtime/registry.h"
#include "op_case.h"

namespace ingot::conformance {

namespace {

struct Att {
  int64_t b, h, tq, tk, d, dv;
  int32_t causal;
  int32_t mask;  // 0 none, 1 bool, 2 additive
  Shape mask_shape;
  double dropout;
  Layout layout;
  const char* note;
};

const std::vector<Att>& attention_shapes() {
  static const std::vector<Att> shapes = {
      {2, 3, 17, 17, 8, 8, 0, 0, {}, 0.0, Layout::Contiguous, "plain"},
      {1, 2, 33, 33, 16, 16, 1, 0, {}, 0.0, Layout::Contiguous, "causal"},
      {2, 1, 5, 9, 7, 3, 0, 0, {}, 0.0, Layout::Transposed, "Tq != Tk, D != Dv, odd D"},
      {1, 2, 3, 11, 4, 4, 2, 0, {}, 0.0, Layout::Contiguous, "causal lower-right (decode)"},
      {1, 2, 6, 4, 4, 4, 1, 0, {}, 0.0, Layout::Contiguous, "causal upper-left, Tq > Tk"},
      {2, 2, 7, 7, 5, 5, 0, 1, {2, 1, 1, 7}, 0.0, Layout::Contiguous, "bool padding mask"},
      {1, 3, 9, 9, 6, 6, 1, 2, {1, 1, 9, 9}, 0.0, Layout::Strided, "causal + additive mask"},
      {1, 1, 4, 4, 3, 3, 0, 1, {1, 1, 4, 4}, 0.0, Layout::Contiguous, "a row sees no key"},
      {2, 2, 13, 13, 8, 8, 1, 0, {}, 0.25, Layout::Contiguous, "causal, dropout 0.25"},
      {1, 1, 1, 19, 8, 8, 0, 0, {}, 0.0, Layout::Contiguous, "one query"},
      {1, 1, 0, 5, 4, 4, 0, 0, {}, 0.0, Layout::Contiguous, "no query"},
      {1, 2, 70, 70, 64, 64, 1, 0, {}, 0.0, Layout::Contiguous, "several tiles, D 64"},
      // the tiled kernels' edges: causal tiles cut by the diagonal, a last tile of 1 to 63 rows,
      // head sizes that are not whole vectors, masks over several tiles, dropout across tiles
      {1, 2, 200, 200, 40, 40, 1, 0, {}, 0.0, Layout::Strided, "causal, several tiles both ways"},
      {2, 1, 130, 150, 24, 40, 2, 2, {2, 1, 1, 150}, 0.0, Layout::Contiguous, "lower-right tiles, key mask"},
      {1, 2, 150, 130, 33, 17, 1, 1, {1, 1, 150, 130}, 0.1, Layout::Transposed, "bool mask, dropout, tiles"},
      {1, 1, 65, 300, 64, 64, 2, 0, {}, 0.0, Layout::Offset, "lower-right, Tk >> Tq"},
  };
  return shapes;
}

Tensor mask_input(const Att& a, DType dt, uint64_t seed) {
  if (a.mask == 2) return make_input(a.mask_shape, dt, seed, Layout::Contiguous, -2.0, 0.0);
  if (a.note == std::string("a row sees no key")) {
    // row 1 hides every key, the others see some
    std::vector<uint8_t> v = {1, 0, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 1, 0, 1};
    Tensor m = Tensor::empty(a.mask_shape, DType::Bool);
    std::copy(v.begin(), v.end(), m.data<bool>());
    return m;
  }
  // keep the first positions of each batch row: a padding mask
  Tensor m = Tensor::empty(a.mask_shape, DType::Bool);
  bool* p = m.data<bool>();
  const int64_t per = a.mask_shape.numel() / a.mask_shape[0];
  for (int64_t b = 0; b < a.mask_shape[0]; ++b)
    for (int64_t j = 0; j < per; ++j) p[b * per + j] = j < per - 2 * b - 1;
  return m;
}

/// Outputs of `op` on the reference backend (backward cases take the forward's outputs).
std::vector<Tensor> on_reference(OpKind op, const std::vector<Tensor>& inputs, const std::vector<OutputSpec>& outs,
                                 const void* attrs) {
  std::vector<Tensor> t;
  for (const OutputSpec& o : outs) t.push_back(Tensor::empty(o.shape, o.dtype));
  run_op_on(BackendRegistry::instance().reference(), op, inputs, t, attrs);
  return t;
}

}  // namespace

CaseList attention_cases(OpKind op) {
  CaseList cases;
  const bool bwd = op == INGOT_OP_SCALED_DOT_PRODUCT_ATTENTION_BWD;
  for (DType dt : table_dtypes(op)) {
    for (const Att& a : attention_shapes()) {
      OpCase c = new_case(op, fmt::format("{} {}", a.note, layout_name(a.layout)));
      auto attr = make_attr<ingot_attr_attention>();
      attr.scale = 1.0 / std::sqrt(static_cast<double>(a.d));
      attr.causal = a.causal;
      attr.mask = a.mask;
      attr.dropout_p = a.dropout;
      attr.seed = 0x5eedu + static_cast<uint64_t>(a.tq);
      attr.offset = 3;
      c.set_attr(attr);
      const Shape q{a.b, a.h, a.tq, a.d}, k{a.b, a.h, a.tk, a.d}, v{a.b, a.h, a.tk, a.dv}, o{a.b, a.h, a.tq, a.dv},
          lse{a.b, a.h, a.tq};
      const Tensor tq = make_input(q, dt, next_seed(op), a.layout, -1.5, 1.5);
      const Tensor tk = make_input(k, dt, next_seed(op), a.layout, -1.5, 1.5);
      const Tensor tv = make_input(v, dt, next_seed(op), a.layout);
      const DType ld = dt == DType::F64 ? DType::F64 : DType::F32;
      if (!bwd) {
        c.inputs = {tq, tk, tv};
        c.outputs = {{o, dt}, {lse, ld}};
      } else {
        // (grad_o, q, k, v, o, lse): o and lse from the reference forward, so that they agree
        std::vector<Tensor> fwd_in{tq, tk, tv};
        if (a.mask != 0) fwd_in.push_back(mask_input(a, dt, 77));
        const std::vector<Tensor> f =
            on_reference(INGOT_OP_SCALED_DOT_PRODUCT_ATTENTION, fwd_in, {{o, dt}, {lse, ld}}, &attr);
        c.inputs = {make_input(o, dt, next_seed(op)), tq, tk, tv, f[0], f[1]};
        c.outputs = {{q, dt}, {k, dt}, {v, dt}};
      }
      if (a.mask != 0) c.inputs.push_back(mask_input(a, dt, 77));
      c.reduction = std::max<int64_t>({a.tk, a.d, a.dv, 1}) * (bwd ? 4 : 1);
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

CaseList cross_entropy_cases(OpKind op) {
  struct Ce {
    int64_t n, classes, ignore_index;
    double smoothing;
    Layout layout;
  };
  const std::vector<Ce> ces = {{8, 10, -100, 0.0, Layout::Contiguous}, {33, 257, -100, 0.1, Layout::Contiguous},
                               {5, 3, 1, 0.0, Layout::Transposed},     {17, 1000, -1, 0.0, Layout::Strided},
                               {0, 7, -100, 0.0, Layout::Contiguous},  {4, 1, -100, 0.2, Layout::Offset}};
  CaseList cases;
  for (DType dt : table_dtypes(op)) {
    for (const Ce& e : ces) {
      OpCase c = new_case(op, fmt::format("C {} ignore {} smoothing {} {}", e.classes, e.ignore_index, e.smoothing,
                                          layout_name(e.layout)));
      auto a = make_attr<ingot_attr_cross_entropy>();
      a.ignore_index = e.ignore_index;
      a.label_smoothing = e.smoothing;
      c.set_attr(a);
      const Shape z{e.n, e.classes}, rows{e.n};
      const Tensor logits = make_input(z, dt, next_seed(op), e.layout, -4.0, 4.0);
      Tensor target = random_indices(rows, e.classes, next_seed(op));
      if (e.n > 2 && e.ignore_index >= 0 && e.ignore_index < e.classes) {
        // keep some targets equal to ignore_index (the random ones may be too)
      } else if (e.n > 2) {
        target.data<int64_t>()[1] = e.ignore_index;
      }
      const DType ld = dt == DType::F64 ? DType::F64 : DType::F32;
      if (op == INGOT_OP_CROSS_ENTROPY) {
        c.inputs = {logits, target};
        c.outputs = {{rows, dt}, {rows, ld}};
      } else {
        const std::vector<Tensor> f = on_reference(INGOT_OP_CROSS_ENTROPY, {logits, target}, {{rows, dt}, {rows, ld}}, &a);
        c.inputs = {make_input(rows, dt, next_seed(op), Layout::Contiguous, 0.1, 1.0), logits, target, f[1]};
        c.outputs = {{z, dt}};
      }
      c.reduction = e.classes;
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

}  // namespace ingot::conformance
