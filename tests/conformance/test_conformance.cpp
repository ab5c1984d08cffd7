// The backend conformance suite: every op of the op table, every case, on every loaded backend
// other than the reference, compared with the reference.
#include <catch2/catch.hpp>

#include <cmath>
#include <iostream>
#include <set>

#include "conformance_runner.h"
#include "ingot/runtime/registry.h"
#include "test_support.h"

namespace ingot::conformance {
namespace {

// One op: the reference must run every case; each backend is checked on the cases it claims,
// directly and through dispatch.
void check_op(OpKind op) {
  const CaseList cases = op_cases(op);
  INFO("op " << op_info(op).name);
  REQUIRE(!cases.empty());
  const Backend& ref = BackendRegistry::instance().reference();
  for (const OpCase& c : cases) {
    INFO("case " << c.describe());
    Outcome expected;
    try {
      expected = run_direct(ref, c);
    } catch (const std::exception& e) {
      FAIL_CHECK("the reference cannot run this case (fix the case table or the reference): " << e.what());
      continue;
    }
    for (const Backend* b : backends_under_test()) {
      INFO("backend " << b->name());
      BackendStats& st = stats()[b->name()];
      std::string error;
      try {
        if (!claims(*b, c)) continue;
        st.claimed[op].insert(case_dtype(c));
        ++st.cases_run;
        error = compare_outcomes(c, run_direct(*b, c), expected);
        if (!error.empty()) error = "run_op_on: " + error;
      } catch (const std::exception& e) {
        error = std::string("run_op_on threw: ") + e.what();
      }
      if (error.empty()) {
        try {
          const Outcome dispatched = run_dispatch(*b, c);
          if (dispatched.backend != b->name()) ++st.dispatched_elsewhere;
          error = compare_outcomes(c, dispatched, expected);
          if (!error.empty()) error = "run_op (dispatch to " + dispatched.backend + "): " + error;
        } catch (const std::exception& e) {
          error = std::string("run_op (dispatch) threw: ") + e.what();
        }
      }
      if (!error.empty()) ++st.failures;
      INFO(error);
      CHECK(error.empty());
    }
  }
}

}  // namespace

// One TEST_CASE per op, generated from the op table.
#define INGOT_OP(ENUM, name, family, n_in, n_out, attr, dtypes, grad) \
  TEST_CASE("conformance: " name, "[conformance][" name "]") { check_op(INGOT_OP_##ENUM); }
#include "ingot/plugin/op_table.def"
#undef INGOT_OP

TEST_CASE("conformance: every op has cases for every dtype of its row", "[conformance][table]") {
  for (int k = 0; k < kOpCount; ++k) {
    const auto op = static_cast<OpKind>(k);
    const CaseList cases = op_cases(op);
    INFO("op " << op_info(op).name);
    CHECK(!cases.empty());
    for (DType dt : table_dtypes(op)) {
      bool covered = false;
      for (const OpCase& c : cases) {
        covered = covered || case_dtype(c) == dt;
      }
      INFO("dtype " << dtype_name(dt));
      CHECK(covered);
    }
  }
}

TEST_CASE("conformance: the comparison catches wrong results", "[conformance][harness]") {
  const Backend& ref = BackendRegistry::instance().reference();
  const OpCase add = op_cases(INGOT_OP_ADD).at(0);
  REQUIRE(add.inputs[0].dtype() == DType::F32);
  const Outcome expected = run_direct(ref, add);
  CHECK(compare_outcomes(add, run_direct(ref, add), expected).empty());
  Outcome wrong = expected;
  wrong.outputs[0] = expected.outputs[0].clone();
  wrong.outputs[0].data<float>()[3] += 1e-3f;
  CHECK_FALSE(compare_outcomes(add, wrong, expected).empty());

  OpCase uniform = op_cases(INGOT_OP_UNIFORM).at(0);  // bit-identical: one ulp is a failure
  REQUIRE(uniform.outputs[0].dtype == DType::F32);
  const Outcome drawn = run_direct(ref, uniform);
  Outcome nudged = drawn;
  nudged.outputs[0] = drawn.outputs[0].clone();
  float& v = nudged.outputs[0].data<float>()[5];
  v = std::nextafter(v, 10.0f);
  CHECK_FALSE(compare_outcomes(uniform, nudged, drawn).empty());

  OpCase sum = new_case(INGOT_OP_SUM, "");
  sum.reduction = 100;
  CHECK(tolerance_for(sum, DType::F32).rtol == Approx(1e-4));
  CHECK(tolerance_for(sum, DType::I32).atol == 0.0);
  CHECK(tolerance_for(sum, DType::BF16).rtol == Approx(2 * kBf16Ulp));  // the depth enters atol only
  CHECK(tolerance_for(sum, DType::BF16).atol == Approx(10 * 2 * kBf16Ulp / 256));

  // bf16: a result one ulp off (rounded the other way) passes; three ulps, or 1e-3 where 0 is
  // expected, fail
  const OpCase one = new_case(INGOT_OP_ADD, "");
  const auto bf16 = [](double a, double b) {
    return Outcome{{Tensor::from_vector(std::vector<double>{a, b}, Shape{2}).to(DType::BF16)}, {}, ""};
  };
  CHECK(compare_outcomes(one, bf16(1.0 + kBf16Ulp, 0.0), bf16(1.0, 0.0)).empty());
  CHECK_FALSE(compare_outcomes(one, bf16(1.0 + 3 * kBf16Ulp, 0.0), bf16(1.0, 0.0)).empty());
  CHECK_FALSE(compare_outcomes(one, bf16(1.0, 1e-3), bf16(1.0, 0.0)).empty());
}

TEST_CASE("conformance: claims are consistent", "[conformance][claims]") {
  // For the first case of each (op, dtype): supports() must not depend on data pointers (the ABI
  // lets core ask before allocating), and a claimed case must execute without error.
  for (const Backend* b : backends_under_test()) {
    INFO("backend " << b->name());
    for (int k = 0; k < kOpCount; ++k) {
      const auto op = static_cast<OpKind>(k);
      std::set<DType> seen;
      for (const OpCase& c : op_cases(op)) {
        if (!seen.insert(case_dtype(c)).second || c.pool_workspace) continue;
        INFO("case " << c.describe());
        std::vector<Tensor> in = c.inputs, out;
        for (const OutputSpec& s : c.outputs) out.push_back(Tensor::empty(s.shape, s.dtype));
        if (b->device_kind() != DeviceKind::CPU) continue;
        std::vector<ingot_tensor_desc> di, dout;
        for (const Tensor& t : in) di.push_back(make_desc(t));
        for (const Tensor& t : out) dout.push_back(make_desc(t));
        const bool with_data = b->supports(op, di.data(), int(di.size()), dout.data(), int(dout.size()), c.attrs());
        for (auto& d : di) d.data = nullptr;
        for (auto& d : dout) d.data = nullptr;
        const bool without = b->supports(op, di.data(), int(di.size()), dout.data(), int(dout.size()), c.attrs());
        CHECK(with_data == without);
        if (with_data) {
          for (int i : c.mutated_inputs) in[size_t(i)] = in[size_t(i)].clone();
          CHECK_NOTHROW(run_op_on(*b, op, in, out, c.attrs()));
        }
      }
    }
  }
}

TEST_CASE("conformance: no backend claims a dtype outside the op's row", "[conformance][claims]") {
  // The first case of each op, with its dtype swapped for each dtype the row does not list.
  for (const Backend* b : backends_under_test()) {
    INFO("backend " << b->name());
    for (int k = 0; k < kOpCount; ++k) {
      const auto op = static_cast<OpKind>(k);
      const CaseList cases = op_cases(op);
      if (cases.empty() || cases[0].pool_workspace) continue;
      const OpCase& c = cases[0];
      const DType from = case_dtype(c);
      for (int d = 0; d < kDTypeCount; ++d) {
        const auto to = static_cast<DType>(d);
        if ((op_info(op).dtypes & dtype_bit(to)) != 0) continue;
        std::vector<ingot_tensor_desc> di, dout;
        for (const Tensor& t : c.inputs) {
          ingot_tensor_desc desc = make_desc(t);
          if (t.dtype() == from) desc.dtype = static_cast<int32_t>(to);
          desc.data = nullptr;
          di.push_back(desc);
        }
        for (const OutputSpec& s : c.outputs) {
          ingot_tensor_desc desc = make_desc(Tensor::empty(s.shape, s.dtype == from ? to : s.dtype));
          desc.data = nullptr;
          dout.push_back(desc);
        }
        INFO("op " << op_info(op).name << " with " << dtype_name(to) << " for " << dtype_name(from));
        CHECK_FALSE(b->supports(op, di.data(), int(di.size()), dout.data(), int(dout.size()), c.attrs()));
      }
    }
  }
}

TEST_CASE("conformance: summary", "[conformance]") {
  for (const std::string& r : rejected_plugins()) std::cout << "conformance: plugin not loaded: " << r << "\n";
  if (backends_under_test().empty()) {
    test::skip("no backend besides the reference is loaded; nothing to compare");
    return;
  }
  size_t total = 0;
  for (int k = 0; k < kOpCount; ++k) total += op_cases(static_cast<OpKind>(k)).size();
  std::cout << "conformance: " << total << " cases for " << kOpCount << " ops\n";
  for (const Backend* b : backends_under_test()) {
    const BackendStats& st = stats()[b->name()];
    // One machine-checkable line per backend (scripts/gpu-check and run_if_cuda.cmake read it):
    // every count is printed, zeros included.
    std::cout << "conformance: " << b->name() << " (" << b->plugin() << "): " << st.claimed.size() << " of " << kOpCount
              << " ops claimed, " << st.cases_run << " cases run, " << st.failures << " failures, "
              << st.dispatched_elsewhere << " claimed cases dispatched elsewhere\n";
    std::string claimed = "conformance: " + b->name() + " claims:";
    for (const auto& [op, dtypes] : st.claimed) {
      claimed += std::string(" ") + op_info(op).name + "[";
      for (DType dt : dtypes) claimed += std::string(dtype_name(dt)) + (dt == *dtypes.rbegin() ? "]" : ",");
    }
    std::cout << claimed << "\n";
  }
  std::cout.flush();
}

}  // namespace ingot::conformance
