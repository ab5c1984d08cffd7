// The dispatch chain: interceptors run in their order around every op, may change a call or
// replace the op, are removed cleanly; autograd records through it; ops are counted per backend.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "ingot/ops/ops.h"
#include "ingot/runtime/backend.h"
#include "ingot/runtime/dispatch.h"
#include "ingot/runtime/dispatch_chain.h"
#include "ingot/runtime/op_counts.h"
#include "ingot/runtime/profiler.h"
#include "test_support.h"

using namespace ingot;

namespace {

/// Appends "<tag>:<op>" to a shared log before and "/<tag>" after the rest of the chain.
class Tracer final : public OpInterceptor {
 public:
  Tracer(std::string tag, std::vector<std::string>* log) : tag_(std::move(tag)), log_(log) {}
  const char* name() const override { return tag_.c_str(); }
  std::vector<Tensor> intercept(const OpCall& call, const DispatchNext& next) override {
    log_->push_back(tag_ + ":" + op_info(call.op).name);
    std::vector<Tensor> out = next(call);
    log_->push_back("/" + tag_);
    return out;
  }

 private:
  std::string tag_;
  std::vector<std::string>* log_;
};

/// Turns every f32 ADD into a SUB: an interceptor that changes the call it passes on.
class AddToSub final : public OpInterceptor {
 public:
  const char* name() const override { return "add_to_sub"; }
  std::vector<Tensor> intercept(const OpCall& call, const DispatchNext& next) override {
    if (call.op != INGOT_OP_ADD) return next(call);
    OpCall changed = call;
    changed.op = INGOT_OP_SUB;
    return next(changed);
  }
};

/// Answers every NEG itself with zeros, never reaching a backend.
class ZeroNeg final : public OpInterceptor {
 public:
  const char* name() const override { return "zero_neg"; }
  std::vector<Tensor> intercept(const OpCall& call, const DispatchNext& next) override {
    if (call.op != INGOT_OP_NEG) return next(call);
    return {zeros((*call.outputs)[0].shape, (*call.outputs)[0].dtype)};
  }
};

bool has_name(const std::string& name) {
  for (const std::string& n : dispatch_chain::names())
    if (n == name) return true;
  return false;
}

}  // namespace

TEST_CASE("dispatch chain: interceptors run outermost first and are removed cleanly", "[dispatch][chain]") {
  std::vector<std::string> log;
  auto inner = std::make_shared<Tracer>("inner", &log);
  auto outer = std::make_shared<Tracer>("outer", &log);
  dispatch_chain::add(inner, InterceptorOrder::Capture);
  dispatch_chain::add(outer, InterceptorOrder::Autocast);
  const Tensor a = Tensor::from_vector<float>({1, 2}, Shape{2});
  (void)neg(a);
  CHECK(log == std::vector<std::string>{"outer:neg", "inner:neg", "/inner", "/outer"});
  dispatch_chain::remove(outer.get());
  dispatch_chain::remove(inner.get());
  dispatch_chain::remove(inner.get());  // absent: a no-op
  log.clear();
  (void)neg(a);
  CHECK(log.empty());
  CHECK_FALSE(has_name("outer"));
}

TEST_CASE("dispatch chain: an interceptor may change the call or answer it itself", "[dispatch][chain]") {
  const Tensor a = Tensor::from_vector<float>({5, 7}, Shape{2});
  const Tensor b = Tensor::from_vector<float>({1, 2}, Shape{2});
  auto to_sub = std::make_shared<AddToSub>();
  auto zero = std::make_shared<ZeroNeg>();
  dispatch_chain::add(to_sub, InterceptorOrder::Observer);
  dispatch_chain::add(zero, InterceptorOrder::Observer);
  CHECK(dispatch_chain::names().size() >= 2);
  const std::vector<float> diff = add(a, b).to_vector<float>();
  const std::vector<float> negated = neg(a).to_vector<float>();
  dispatch_chain::remove(to_sub.get());
  dispatch_chain::remove(zero.get());
  CHECK(diff == std::vector<float>{4, 5});
  CHECK(negated == std::vector<float>{0, 0});
  CHECK(add(a, b).to_vector<float>() == std::vector<float>{6, 9});
}

TEST_CASE("dispatch chain: autograd records through the chain once a tensor requires grad", "[dispatch][chain]") {
  const Tensor x = Tensor::from_vector<float>({1, 2, 3}, Shape{3});
  x.set_requires_grad(true);
  CHECK(has_name("autograd"));
  std::vector<std::string> log;
  auto below = std::make_shared<Tracer>("below_autograd", &log);
  dispatch_chain::add(below, InterceptorOrder::Capture);
  const Tensor y = mul(x, x);
  dispatch_chain::remove(below.get());
  REQUIRE(y.grad_fn() != nullptr);  // recorded by the chain's autograd step
  sum(y).backward();
  CHECK(x.grad().to_vector<float>() == std::vector<float>{2, 4, 6});
  CHECK(log.front() == "below_autograd:mul");
}

TEST_CASE("dispatch chain: the profiler times ops only while it records", "[dispatch][chain][profiler]") {
  CHECK_FALSE(has_name("profiler"));
  Profiler::instance().start();
  CHECK(has_name("profiler"));
  (void)neg(Tensor::from_vector<float>({1}, Shape{1}));
  Profiler::instance().stop();
  CHECK_FALSE(has_name("profiler"));
  bool found = false;
  for (const ProfileRow& r : Profiler::instance().report().rows) found = found || (r.name == "neg" && r.category == "op");
  CHECK(found);
}

TEST_CASE("op counts: every executed op is counted for the backend that ran it", "[dispatch][counts]") {
  reset_op_counts();
  const Tensor a = Tensor::from_vector<float>({1, 2}, Shape{2});
  for (int i = 0; i < 3; ++i) (void)neg(a);
  const auto counts = ops_by_backend();
  int64_t total = 0;
  for (const auto& [name, n] : counts) {
    CHECK(n > 0);
    total += n;
  }
  CHECK(total >= 3);
  REQUIRE(!counts.empty());
  CHECK(counts.front().first == select_backend(INGOT_OP_NEG, {a}, {{Shape{2}, DType::F32}}).name());
  reset_op_counts();
  CHECK(ops_by_backend().empty());
}
