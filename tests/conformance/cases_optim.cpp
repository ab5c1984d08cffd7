// Fused optimizer update cases (ADAM_UPDATE): Adam and AdamW, with and without weight decay and
// amsgrad, first and later steps, and AdamW at lr x weight_decay of 0.75 and 2 (where decaying
// after the step, scaling by lr twice or coupling the decay would show); params and every moment
// are compared after the in-place update. The CAPTURABLE forms of SGD_UPDATE and ADAM_UPDATE get
// the plain op's cases with lr and step moved into the float64 tensor that comes first.
#include <string>

#include "op_case.h"

namespace ingot::conformance {

namespace {

struct Adam {
  double weight_decay;
  int64_t step;
  bool decoupled, amsgrad;
  double lr = 1e-2;
};

std::string adam_note(const Adam& s, const std::string& shapes) {
  return std::string(s.decoupled ? "adamw" : "adam") + ", lr " + std::to_string(s.lr) + ", wd " +
         std::to_string(s.weight_decay) + ", step " + std::to_string(s.step) + (s.amsgrad ? ", amsgrad" : "") + ", " +
         shapes;
}

void adam_update(OpKind op, DType dt, CaseList& cases) {
  const std::vector<Adam> adams = {{0.0, 1, false, false},    {1e-2, 7, false, false},   {1e-2, 1, true, false},
                                   {0.1, 12, true, true},     {0.0, 3, false, true},     {1.5, 1, true, false, 0.5},
                                   {1.5, 4, true, true, 0.5}, {2.0, 2, true, false, 1.0}};
  struct Params {
    std::vector<Shape> shapes;
    Layout layout;
    std::string note;
  };
  const std::vector<Params> sets = {{{{17}, {3, 5}, {}}, Layout::Contiguous, "17, [3,5], 0-dim"},
                                    {{{1003}, {1, 33}, {0}}, Layout::Contiguous, "1003, [1,33], 0-size"},
                                    {{{4, 6}}, Layout::Transposed, "transposed view"},
                                    {{{40000}}, Layout::Contiguous, "40000 (threaded)"}};
  for (size_t k = 0; k < adams.size(); ++k) {
    const Adam& s = adams[k];
    // every configuration on the small sets; the long one once (it is there for the threaded path)
    for (size_t j = 0; j < sets.size(); ++j) {
      if (j == 3 && k != 3) continue;
      OpCase c = new_case(op, adam_note(s, sets[j].note));
      const int per = s.amsgrad ? 5 : 4;
      int i = 0;
      for (const Shape& shape : sets[j].shapes) {
        c.inputs.push_back(make_input(shape, dt, next_seed(op), sets[j].layout));             // param
        c.inputs.push_back(make_input(shape, dt, next_seed(op), sets[j].layout));             // grad
        c.inputs.push_back(make_input(shape, dt, next_seed(op), sets[j].layout, -0.5, 0.5));  // exp_avg
        // second moments are non-negative (square roots); max >= exp_avg_sq is not required
        c.inputs.push_back(make_input(shape, dt, next_seed(op), sets[j].layout, 0.01, 1.0));
        if (s.amsgrad) c.inputs.push_back(make_input(shape, dt, next_seed(op), sets[j].layout, 0.01, 1.0));
        for (int m = 0; m < per; ++m) {
          if (m != 1) c.mutated_inputs.push_back(i * per + m);
        }
        ++i;
      }
      auto a = make_attr<ingot_attr_adam>();
      a.lr = s.lr, a.beta1 = 0.9, a.beta2 = 0.999, a.eps = 1e-8, a.weight_decay = s.weight_decay;
      a.step = s.step, a.decoupled = s.decoupled, a.amsgrad = s.amsgrad;
      c.set_attr(a);
      cases.push_back(std::move(c));
    }
  }
}

}  // namespace

CaseList optim_cases(OpKind op) {
  CaseList cases;
  for (DType dt : table_dtypes(op)) adam_update(op, dt, cases);
  return cases;
}

CaseList capturable_cases(OpKind op) {
  const bool sgd = op == INGOT_OP_SGD_UPDATE_CAPTURABLE;
  CaseList cases = sgd ? multi_tensor_cases(INGOT_OP_SGD_UPDATE) : optim_cases(INGOT_OP_ADAM_UPDATE);
  for (OpCase& c : cases) {
    c.op = op;
    c.note = "capturable, " + c.note;
    // lr and step move into the tensor; the attributes' copies get values that would show if read
    double lr = 0.0, step = 0.0;
    if (sgd) {
      ingot_attr_sgd a;
      std::memcpy(&a, c.attr.data(), sizeof(a));
      lr = a.lr;
      a.lr = -3.0;
      c.set_attr(a);
    } else {
      ingot_attr_adam a;
      std::memcpy(&a, c.attr.data(), sizeof(a));
      lr = a.lr;
      step = static_cast<double>(a.step);
      a.lr = -3.0;
      a.step = 1000;
      c.set_attr(a);
    }
    c.inputs.insert(c.inputs.begin(), Tensor::from_vector<double>({lr, step}, Shape{2}));
    for (int& i : c.mutated_inputs) ++i;
  }
  return cases;
}

}  // namespace ingot::conformance
