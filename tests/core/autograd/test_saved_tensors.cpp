// What the graph keeps for each gradient rule: every differentiable op declares it, each
// declared tensor is really read, undeclared ones are gone after the forward pass, and a rule
// that reads one it did not declare fails with the op's name.
#include <catch2/catch.hpp>

#include <memory>

#include "grad_check.h"
#include "ingot/autograd/grad_rules.h"
#include "ingot/autograd/saved_tensors.h"
#include "ingot/ops/ops.h"
#include "test_support.h"

namespace ingot {
namespace {

using autograd::is_shape_only;
using autograd::shape_only;

/// Bits above an op's arity would declare tensors that do not exist.
uint64_t arity_mask(int n) { return n >= 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1; }

std::weak_ptr<Storage> storage_of(const Tensor& t) { return t.storage(); }

}  // namespace

TEST_CASE("saved tensors: every differentiable op declares what its gradient reads", "[autograd][saves]") {
  for (int k = 0; k < INGOT_OP_COUNT; ++k) {
    const auto op = static_cast<OpKind>(k);
    const OpInfo& info = op_info(op);
    INFO(info.name);
    CHECK(has_grad_saves(op) == info.differentiable);
    if (!info.differentiable) {
      CHECK(grad_saves(op, nullptr).empty());
      continue;
    }
    // (a null attribute struct: the declarations that read attributes say nothing then)
    const GradSaves s = grad_saves(op, nullptr);
    if (info.n_in >= 0) CHECK((s.inputs & ~arity_mask(info.n_in)) == 0);
    CHECK((s.outputs & ~arity_mask(info.n_out)) == 0);
  }
}

TEST_CASE("saved tensors: each declared tensor is read by its rule (the declarations are minimal)",
          "[autograd][saves]") {
  // Dropping any one declared tensor from a finite-difference case makes its rule fail loudly;
  // that the declared ones suffice is what the finite-difference test checks (it runs every
  // rule on the call as the graph keeps it).
  int checked = 0;
  for (const test::GradCase& c : test::all_grad_cases()) {
    INFO("case " << c.name);
    const std::vector<Tensor> ys = run_op(c.op, c.inputs, c.outputs, c.attrs.get());
    std::vector<Tensor> gos(ys.size());
    for (int k = 0; k < c.n_grad_outputs; ++k) gos[k] = test::rnd(ys[k].shape());
    const GradCall kept = autograd::kept_for_backward(GradCall{c.op, c.inputs, ys, c.attrs.get()});
    const GradSaves s = grad_saves(c.op, c.attrs.get());
    for (size_t i = 0; i < kept.inputs.size() + kept.outputs.size(); ++i) {
      const bool is_input = i < kept.inputs.size();
      const size_t j = is_input ? i : i - kept.inputs.size();
      if (!(is_input ? s.input(j) : s.output(j))) continue;
      INFO((is_input ? "input " : "output ") << j);
      GradCall less = kept;
      Tensor& t = is_input ? less.inputs[j] : less.outputs[j];
      t = shape_only(t);
      CHECK_THROWS_WITH(autograd::run_grad_rule(less, gos),
                        Catch::Contains("gradient of " + std::string(op_info(c.op).name)) &&
                            Catch::Contains(is_input ? "input " + std::to_string(j) : "output " + std::to_string(j)) &&
                            Catch::Contains("GradSaves"));
      ++checked;
    }
  }
  CHECK(checked >= 40);
}

TEST_CASE("saved tensors: ops that need only shapes keep no data", "[autograd][saves]") {
  for (OpKind op : {INGOT_OP_ADD, INGOT_OP_SUB, INGOT_OP_NEG, INGOT_OP_SUM, INGOT_OP_MEAN, INGOT_OP_CONCAT,
                    INGOT_OP_PAD, INGOT_OP_COPY, INGOT_OP_CAST, INGOT_OP_AVG_POOL2D, INGOT_OP_SIGN}) {
    INFO(op_info(op).name);
    CHECK(grad_saves(op, nullptr).empty());
  }
  CHECK(grad_saves(INGOT_OP_RELU, nullptr) == GradSaves{0, 1});     // the output, as torch
  CHECK(grad_saves(INGOT_OP_DROPOUT, nullptr) == GradSaves{0, 2});  // the mask only
  auto plain = make_attr<ingot_attr_matmul>();
  CHECK(grad_saves(INGOT_OP_MATMUL, &plain) == GradSaves{0b11, 0});
  CHECK(grad_saves(INGOT_OP_MATMUL, &plain, 0b10) == GradSaves{0b01, 0});  // the weight's gradient only
  plain.activation = INGOT_ACT_RELU;
  CHECK(grad_saves(INGOT_OP_MATMUL, &plain, 0b110) == GradSaves{0b01, 0b1});
  CHECK(grad_saves(INGOT_OP_MUL, nullptr, 0b01) == GradSaves{0b10, 0});  // x * mask keeps the mask only
}

TEST_CASE("saved tensors: y = relu(x @ w + b) keeps nothing of the pre-activation", "[autograd][saves]") {
  const Tensor x = test::random_tensor({8, 5}, DType::F64, 1);
  const Tensor w = test::random_tensor({5, 4}, DType::F64, 2).set_requires_grad(true);
  const Tensor b = test::random_tensor({4}, DType::F64, 3).set_requires_grad(true);
  std::weak_ptr<Storage> xw_storage, sum_storage;
  Tensor y;
  {
    const Tensor xw = matmul(x, w);  // kept by nothing: add reads only shapes
    const Tensor s = xw + b;         // kept by nothing: relu's gradient reads its output
    xw_storage = storage_of(xw);
    sum_storage = storage_of(s);
    y = relu(s);
    CHECK(xw.use_count() == 1);  // the graph holds no handle to them either
    CHECK(s.use_count() == 1);
  }
  CHECK(xw_storage.expired());
  CHECK(sum_storage.expired());
  // ... and the gradients are those of the formula: dL/dw = x^T (g * [y > 0]), dL/db = sum(g * [y > 0]).
  const Tensor g = test::random_tensor({8, 4}, DType::F64, 4);
  y.backward(g);
  const Tensor gp = where(gt(y, 0.0), g, 0.0);
  INGOT_REQUIRE_CLOSE(w.grad(), matmul(x.transpose(0, 1), gp), 1e-12, 1e-12);
  INGOT_REQUIRE_CLOSE(b.grad(), sum(gp, {0}), 1e-12, 1e-12);
}

TEST_CASE("saved tensors: an input is kept only when another input's gradient reads it", "[autograd][saves]") {
  const Tensor w = test::random_tensor({6}, DType::F64, 5).set_requires_grad(true);
  const Tensor mask = gt(test::random_tensor({6}, DType::F64, 6), 0.0).to(DType::F64);
  std::weak_ptr<Storage> h_storage;
  Tensor y;
  {
    const Tensor h = w + 1.0;  // add keeps nothing
    h_storage = storage_of(h);
    y = h * mask;  // the mask needs no gradient, so mul keeps the mask, not h
  }
  CHECK(h_storage.expired());
  y.backward(ones({6}, DType::F64));
  CHECK(w.grad().to_vector<double>() == mask.to_vector<double>());
}

TEST_CASE("saved tensors: reading an undeclared tensor fails loudly, never silently", "[autograd][saves]") {
  const Tensor a = test::random_tensor({2, 3}, DType::F32, 7);
  const Tensor stand_in = shape_only(a);
  CHECK(is_shape_only(stand_in));
  CHECK_FALSE(is_shape_only(a));
  CHECK(stand_in.shape() == a.shape());
  CHECK(stand_in.dtype() == a.dtype());
  CHECK(stand_in.device() == a.device());
  CHECK(stand_in.strides() == a.strides());
  CHECK(is_shape_only(stand_in.transpose(0, 1)));    // views of a stand-in have no data either
  CHECK(zeros_like(stand_in).shape() == a.shape());  // shapes and dtypes work
  CHECK_THROWS_WITH(stand_in.data<float>(), Catch::Contains("without data"));
  CHECK_THROWS_WITH(exp(stand_in), Catch::Contains("shape-only stand-in"));
  // A rule reading what its declaration leaves out names the op and the tensor.
  const Tensor b = test::random_tensor({2, 3}, DType::F32, 8);
  GradCall call{INGOT_OP_MUL, {a, shape_only(b)}, {a * b}, nullptr};
  CHECK_THROWS_WITH(autograd::run_grad_rule(call, {ones({2, 3})}), Catch::Contains("gradient of mul") &&
                                                                       Catch::Contains("input 1 (float32 [2, 3])") &&
                                                                       Catch::Contains("grad_rules.cpp"));
}

}  // namespace ingot
