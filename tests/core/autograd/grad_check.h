// Generic finite-difference checker of gradient rules: runs one op call, applies its rule to a
// random upstream gradient g and compares with central differences of <g, f(x)> for every element.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ingot/autograd/grad_rules.h"
#include "ingot/runtime/dispatch.h"

namespace ingot::test {

/// One op call to check: inputs (f64, plus int64 indices / bool conditions), output specs and
/// attributes; gradients are checked for every f64 input and must be undefined for the others.
struct GradCase {
  std::string name;
  OpKind op;
  std::vector<Tensor> inputs;
  std::vector<OutputSpec> outputs;
  std::shared_ptr<const void> attrs;
  int n_grad_outputs = 1;  ///< outputs that receive an upstream gradient (the rest are indices / statistics)
  uint32_t constant_inputs = 0;  ///< bit k: f64 input k is not differentiated (an additive mask)
};

template <class A>
std::shared_ptr<const void> attr(const A& a) {
  return std::make_shared<A>(a);
}

/// Every finite-difference case of test_grad_rules.cpp (at least one per rule).
std::vector<GradCase> all_grad_cases();

/// Checks the rule of c.op at c (Catch2 CHECKs; eps 1e-6, |numeric - analytic| <= 1e-6 (1 + max)).
void check_grad_case(const GradCase& c);

/// Random f64 values in [lo, hi) from a fresh seed each call.
Tensor rnd(const Shape& s, double lo = -1.0, double hi = 1.0);
/// Values with |x| in [0.2, 1.2]: away from the kinks of abs, relu, sign.
Tensor away0(const Shape& s);
/// A non-contiguous tensor of shape s (rank >= 2): the transpose of a contiguous one.
Tensor noncontig(const Shape& s, double lo = -1.0, double hi = 1.0);
/// int64 indices in [0, bound).
Tensor index(const Shape& s, int64_t bound);

}  // namespace ingot::test
