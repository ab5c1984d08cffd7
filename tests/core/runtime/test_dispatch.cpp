// Dispatch: backend selection by priority, fallback to the reference, opaque layouts reordered
// when another backend or the user reads them, workspace from core's allocator.
#include <catch2/catch.hpp>

#include "ingot/base/allocator.h"
#include "ingot/plugin/sdk.h"
#include "ingot/runtime/dispatch.h"
#include "ingot/runtime/registry.h"
#include "test_support.h"

using namespace ingot;

namespace {

/// A test backend that runs NEG on f32 and keeps its output in a private "reversed" layout.
class ReversingBackend final : public sdk::ComputeImpl {
 public:
  int tag = 0;
  int released = 0;
  int executed = 0;
  bool got_workspace = false;

  bool supports(const sdk::OpCall& c) override {
    if (c.op != INGOT_OP_NEG || c.in[0].dtype != INGOT_F32) return false;
    return c.in[0].layout == INGOT_LAYOUT_STRIDED ? sdk::is_contiguous(c.in[0]) : c.in[0].layout_handle == &tag;
  }
  bool choose_output_layout(const sdk::OpCall&, ingot_tensor_desc* out, int index) override {
    out[index].layout = INGOT_LAYOUT_OPAQUE;
    out[index].layout_handle = &tag;
    out[index].nbytes = sdk::numel(out[index]) * 4;
    return true;
  }
  void execute(const sdk::OpCall& c, const ingot_exec_context& ctx) override {
    void* ws = nullptr;
    ingot_status* s = ctx.workspace(ctx.host, 4096, &ws);
    got_workspace = s == nullptr && ws != nullptr;
    const int64_t n = sdk::numel(c.in[0]);
    const float* x = sdk::data_ptr<float>(c.in[0]);
    float* y = sdk::data_ptr<float>(c.out[0]);
    const bool in_reversed = c.in[0].layout == INGOT_LAYOUT_OPAQUE;
    for (int64_t i = 0; i < n; ++i) y[n - 1 - i] = -(in_reversed ? x[n - 1 - i] : x[i]);
    ++executed;
  }
  void to_strided(const ingot_tensor_desc& src, const ingot_tensor_desc& dst, const ingot_exec_context&) override {
    const int64_t n = sdk::numel(src);
    for (int64_t i = 0; i < n; ++i) sdk::data_ptr<float>(dst)[i] = sdk::data_ptr<float>(src)[n - 1 - i];
  }
  void layout_release(void*) override { ++released; }
};

ReversingBackend& reversing() {
  static ReversingBackend* impl = [] {
    auto* b = new ReversingBackend();
    BackendRegistry::instance().add(sdk::make_host_backend(b, "reversing", 50), "test");
    return b;
  }();
  return *impl;
}

Tensor values() { return Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5}, {5}); }

std::vector<Tensor> run_neg(const Tensor& x) {
  return run_op(INGOT_OP_NEG, {x}, {OutputSpec{x.shape(), x.dtype()}});
}

}  // namespace

TEST_CASE("the highest-priority backend that supports an op runs it", "[dispatch]") {
  ReversingBackend& b = reversing();
  const Tensor x = values();
  CHECK(select_backend(INGOT_OP_NEG, {x}, {OutputSpec{x.shape(), x.dtype()}}).name() == "reversing");
  // Declined (f64) -> the reference runs it.
  const Tensor xd = x.to(DType::F64);
  CHECK(select_backend(INGOT_OP_NEG, {xd}, {OutputSpec{x.shape(), DType::F64}}).name() == "reference");
  const int before = b.executed;
  const Tensor y = run_neg(x).front();
  CHECK(b.executed == before + 1);
  CHECK(b.got_workspace);
  CHECK(y.is_opaque());
  CHECK(y.to_vector<float>() == std::vector<float>{-1, -2, -3, -4, -5});
}

TEST_CASE("opaque layouts stay with their owner and are reordered for everyone else", "[dispatch]") {
  ReversingBackend& b = reversing();
  const Tensor y = run_neg(values()).front();
  REQUIRE(y.is_opaque());
  const Tensor z = run_neg(y).front();  // the owner reads its own layout
  CHECK(z.is_opaque());
  CHECK(z.to_vector<float>() == std::vector<float>{1, 2, 3, 4, 5});
  const int released = b.released;
  {
    const Tensor w = run_neg(values()).front();
    // The reference cannot read the layout: dispatch reorders w first (in place).
    const Tensor e = run_op(INGOT_OP_ABS, {w}, {OutputSpec{w.shape(), w.dtype()}}).front();
    CHECK_FALSE(e.is_opaque());
    CHECK(e.to_vector<float>() == std::vector<float>{1, 2, 3, 4, 5});
    CHECK_FALSE(w.is_opaque());
  }
  CHECK(b.released == released + 1);
  CHECK(y.slice(0, 1, 3).to_vector<float>() == std::vector<float>{-2, -3});  // views reorder first
}

TEST_CASE("restrict_to keeps the reference as the last resort", "[dispatch]") {
  reversing();
  auto& reg = BackendRegistry::instance();
  const Tensor x = values();
  reg.restrict_to({"reference"});
  CHECK(select_backend(INGOT_OP_NEG, {x}, {OutputSpec{x.shape(), x.dtype()}}).name() == "reference");
  CHECK_FALSE(run_neg(x).front().is_opaque());
  reg.restrict_to({});
  CHECK(select_backend(INGOT_OP_NEG, {x}, {OutputSpec{x.shape(), x.dtype()}}).name() == "reversing");
}

TEST_CASE("workspace memory goes back to the allocator after the call", "[dispatch]") {
  reversing();
  const Tensor x = values();
  run_neg(x);  // warm the cache
  const auto before = host_allocator().stats();
  {
    const Tensor y = run_neg(x).front();
  }
  const auto after = host_allocator().stats();
  CHECK(after.allocated == before.allocated);
  CHECK(after.cache_hits >= before.cache_hits + 2);  // output and workspace both from the cache
}

TEST_CASE("dispatch errors name the op and the problem", "[dispatch]") {
  const Tensor x = values();
  CHECK_THROWS_WITH(run_op(INGOT_OP_ADD, {x}, {OutputSpec{x.shape(), x.dtype()}}),
                    Catch::Contains("add: expects 2 inputs, got 1"));
  auto attr = make_attr<ingot_attr_arange>();
  attr.step = 1;
  CHECK_THROWS_WITH(run_op(INGOT_OP_ARANGE, {}, {OutputSpec{Shape{3}, DType::F32}}, &attr, Device{DeviceKind::CUDA, 0}),
                    Catch::Contains("no backend on cuda:0 runs arange()"));
}
