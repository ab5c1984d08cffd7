// Normalisation cases (LAYER_NORM, BATCH_NORM and their backward ops) and the multi-tensor ops
// GLOBAL_NORM and SGD_UPDATE; in-place updates (running stats, params, momentum) are compared.
#include <algorithm>

#include "op_case.h"

namespace ingot::conformance {

namespace {

struct Ln {
  Shape x;
  int normalized_ndim;
  bool affine;
  Layout layout;
};

// mean / rstd keep the input's rank with the normalized dims as 1 (torch's native_layer_norm)
Shape stat_shape(const Shape& x, int normalized_ndim) {
  Shape s = x;
  for (int d = x.size() - normalized_ndim; d < x.size(); ++d) s[d] = 1;
  return s;
}

Shape tail(const Shape& x, int n) {
  Shape s;
  for (int d = x.size() - n; d < x.size(); ++d) s.push_back(x[d]);
  return s;
}

void layer_norm(OpKind op, DType dt, CaseList& cases) {
  std::vector<Ln> lns = {{{4, 17}, 1, true, Layout::Contiguous},   {{2, 3, 5}, 2, true, Layout::Transposed},
                         {{3, 1003}, 1, true, Layout::Contiguous}, {{6, 33}, 1, false, Layout::Strided},
                         {{5, 1}, 1, true, Layout::Contiguous},    {{0, 8}, 1, true, Layout::Contiguous}};
  for (const Ln& l : lns) {
    OpCase c = new_case(op, std::string(l.affine ? "affine, " : "no affine, ") + layout_name(l.layout));
    const Shape w = tail(l.x, l.normalized_ndim);
    const Shape stat = stat_shape(l.x, l.normalized_ndim);
    auto a = make_attr<ingot_attr_layer_norm>();
    a.normalized_ndim = l.normalized_ndim, a.has_affine = l.affine ? 1 : 0, a.eps = 1e-5;
    c.set_attr(a);
    c.reduction = w.numel();
    if (op == INGOT_OP_LAYER_NORM) {
      c.inputs = {make_input(l.x, dt, next_seed(op), l.layout, -2.0, 2.0), make_input(w, dt, next_seed(op)),
                  make_input(w, dt, next_seed(op))};
      c.outputs = {{l.x, dt}, {stat, dt}, {stat, dt}};
    } else {  // (grad_y, x, mean, rstd, weight) -> (grad_x, grad_weight, grad_bias)
      c.inputs = {make_input(l.x, dt, next_seed(op)), make_input(l.x, dt, next_seed(op), l.layout, -2.0, 2.0),
                  make_input(stat, dt, next_seed(op), Layout::Contiguous, -0.5, 0.5),
                  make_input(stat, dt, next_seed(op), Layout::Contiguous, 0.5, 2.0), make_input(w, dt, next_seed(op))};
      c.outputs = {{l.x, dt}, {w, dt}, {w, dt}};
      if (!l.affine) c.compared_outputs = {0};
      c.reduction = std::max(w.numel(), l.x.numel() / std::max<int64_t>(w.numel(), 1));
    }
    cases.push_back(std::move(c));
  }
}

void batch_norm(OpKind op, DType dt, CaseList& cases) {
  struct Bn {
    Shape x;
    bool training, affine;
  };
  std::vector<Bn> bns = {{{4, 3, 5, 5}, true, true},
                         {{4, 3, 5, 5}, false, true},
                         {{8, 5}, true, true},
                         {{2, 17, 3, 3}, true, false},
                         {{1, 2, 1, 1}, false, false}};
  for (const Bn& b : bns) {
    if (op == INGOT_OP_BATCH_NORM_BWD && !b.training) continue;  // the backward of batch statistics
    OpCase c = new_case(op, std::string(b.training ? "training" : "eval") + (b.affine ? ", affine" : ""));
    const Shape ch{b.x[1]};
    auto a = make_attr<ingot_attr_batch_norm>();
    a.training = b.training ? 1 : 0, a.has_affine = b.affine ? 1 : 0, a.eps = 1e-5, a.momentum = 0.1;
    c.set_attr(a);
    c.reduction = b.x.numel() / b.x[1];
    if (op != INGOT_OP_BATCH_NORM_BWD) {
      // (x, weight, bias, running_mean, running_var) -> (y, save_mean, save_invstd); y through
      // relu for BATCH_NORM_RELU
      c.inputs = {make_input(b.x, dt, next_seed(op), Layout::Contiguous, -2.0, 2.0), make_input(ch, dt, next_seed(op)),
                  make_input(ch, dt, next_seed(op)), make_input(ch, dt, next_seed(op), Layout::Contiguous, -0.5, 0.5),
                  make_input(ch, dt, next_seed(op), Layout::Contiguous, 0.5, 2.0)};
      c.outputs = {{b.x, dt}, {ch, dt}, {ch, dt}};
      if (b.training) {
        c.mutated_inputs = {3, 4};
      } else {
        c.compared_outputs = {0};  // eval mode defines y only
      }
    } else {  // (grad_y, x, weight, save_mean, save_invstd) -> (grad_x, grad_weight, grad_bias)
      c.inputs = {make_input(b.x, dt, next_seed(op)), make_input(b.x, dt, next_seed(op), Layout::Contiguous, -2.0, 2.0),
                  make_input(ch, dt, next_seed(op)), make_input(ch, dt, next_seed(op), Layout::Contiguous, -0.5, 0.5),
                  make_input(ch, dt, next_seed(op), Layout::Contiguous, 0.5, 2.0)};
      c.outputs = {{b.x, dt}, {ch, dt}, {ch, dt}};
      if (!b.affine) c.compared_outputs = {0};
    }
    cases.push_back(std::move(c));
  }
}

void global_norm(OpKind op, DType dt, CaseList& cases) {
  const std::vector<std::vector<Shape>> sets = {{{17}, {3, 5}, {}}, {{1003}}, {{0}, {33, 2}}};
  for (size_t i = 0; i < sets.size(); ++i) {
    OpCase c = new_case(op, std::to_string(sets[i].size()) + " tensors");
    int64_t total = 0;
    for (const Shape& s : sets[i]) {
      const Layout l = s.size() == 2 ? Layout::Transposed : Layout::Contiguous;
      c.inputs.push_back(make_input(s, dt, next_seed(op), l));
      total += s.numel();
    }
    if (dt == DType::F32 && i == 0) {  // mixed precision: an f16 gradient among f32 ones
      c.inputs.push_back(make_input({9}, DType::F16, next_seed(op)));
      c.note += ", one f16";
      total += 9;
    }
    c.outputs = {{{}, DType::F32}};
    c.reduction = std::max<int64_t>(total, 1);
    cases.push_back(std::move(c));
  }
}

void sgd_update(OpKind op, DType dt, CaseList& cases) {
  struct Sgd {
    double momentum, weight_decay;
    int nesterov, first_step;
  };
  std::vector<Sgd> sgds = {{0.9, 1e-4, 0, 0}, {0.9, 0.0, 1, 1}, {0.0, 1e-2, 0, 0}, {0.9, 1e-2, 1, 0}, {0.5, 0.0, 0, 1}};
  for (const Sgd& s : sgds) {
    OpCase c = new_case(op, "momentum " + std::to_string(s.momentum) + (s.nesterov ? ", nesterov" : "") +
                                (s.first_step ? ", first step" : ""));
    const std::vector<Shape> params = {{17}, {3, 5}, {1003}};
    for (size_t i = 0; i < params.size(); ++i) {
      c.inputs.push_back(make_input(params[i], dt, next_seed(op)));  // param
      c.inputs.push_back(make_input(params[i], dt, next_seed(op)));  // grad
      c.inputs.push_back(make_input(params[i], dt, next_seed(op)));  // momentum buffer
      c.mutated_inputs.push_back(static_cast<int>(3 * i));
      if (s.momentum != 0.0) c.mutated_inputs.push_back(static_cast<int>(3 * i + 2));
    }
    auto a = make_attr<ingot_attr_sgd>();
    a.lr = 0.1, a.momentum = s.momentum, a.dampening = 0.0, a.weight_decay = s.weight_decay;
    a.nesterov = s.nesterov, a.first_step = s.first_step;
    c.set_attr(a);
    cases.push_back(std::move(c));
  }
}

}  // namespace

CaseList norm_cases(OpKind op) {
  CaseList cases;
  for (DType dt : table_dtypes(op)) {
    if (op == INGOT_OP_LAYER_NORM || op == INGOT_OP_LAYER_NORM_BWD) {
      layer_norm(op, dt, cases);
    } else {
      batch_norm(op, dt, cases);
    }
  }
  return cases;
}

CaseList multi_tensor_cases(OpKind op) {
  CaseList cases;
  for (DType dt : table_dtypes(op)) {
    if (op == INGOT_OP_GLOBAL_NORM) {
      global_norm(op, dt, cases);
    } else {
      sgd_update(op, dt, cases);
    }
  }
  return cases;
}

}  // namespace ingot::conformance
