// Gradient checkpointing with the functional API: gradients bit-identical to the plain run (with
// dropout and autocast), the random stream unchanged, one recomputation per backward pass, no_grad,
// nesting, retain_graph, and a clear error when a segment does not repeat itself.
#include <catch2/catch.hpp>

#include <vector>

#include "ingot/amp/autocast.h"
#include "ingot/autograd/checkpoint.h"
#include "ingot/base/grad_mode.h"
#include "ingot/ops/ops.h"
#include "ingot/runtime/plugin_loader.h"
#include "ingot/runtime/registry.h"
#include "test_support.h"

namespace ingot {
namespace {

using autograd::checkpoint;

struct Params {
  Tensor w1 = test::random_tensor({12, 16}, DType::F32, 11).set_requires_grad(true);
  Tensor b1 = test::random_tensor({16}, DType::F32, 12).set_requires_grad(true);
  Tensor w2 = test::random_tensor({16, 8}, DType::F32, 13).set_requires_grad(true);
  std::vector<Tensor> all() const { return {w1, b1, w2}; }
  void zero_grad() const {
    for (const Tensor& p : all()) p.set_grad(Tensor());
  }
};

/// A segment that draws from two generators: dropout's and the default one (noise).
Tensor segment(const Params& p, Generator& gen, const Tensor& x, int* calls = nullptr) {
  if (calls != nullptr) ++*calls;
  Tensor h = relu(matmul(x, p.w1) + p.b1);
  h = dropout(h, 0.3, true, &gen);
  h = h + rand(h.shape()) * 0.01;  // the default generator
  return tanh(matmul(h, p.w2));
}

/// All gradients as vectors, for exact comparison.
std::vector<std::vector<float>> grads_of(const std::vector<Tensor>& ts) {
  std::vector<std::vector<float>> out;
  for (const Tensor& t : ts) out.push_back(t.grad().to_vector<float>());
  return out;
}

/// The reference backend alone, then everything loaded (cpu_onednn when built).
std::vector<std::vector<std::string>> backend_sets() { return test::backend_sets("checkpointing"); }

using test::RestoreBackends;

}  // namespace

TEST_CASE("checkpoint: gradients and random streams are bit-identical to the plain run", "[autograd][checkpoint]") {
  const RestoreBackends restore;
  for (const auto& backends : backend_sets()) {
    BackendRegistry::instance().restrict_to(backends);
    INFO("backends: " << (backends.empty() ? "all loaded" : backends[0]));
    const Params p;
    Generator gen(42);
    const Tensor x = test::random_tensor({6, 12}, DType::F32, 14).set_requires_grad(true);
    const auto run = [&](bool ckpt, int* calls) {
      p.zero_grad();
      x.set_grad(Tensor());
      gen.manual_seed(42);
      default_generator().manual_seed(7);
      Tensor y = ckpt ? checkpoint([&](const Tensor& in) { return segment(p, gen, in, calls); }, x)
                      : segment(p, gen, x, calls);
      // draws after the segment, before backward: the recomputation must not move them
      const Tensor after = rand({5}, DType::F32, &gen);
      (sum(y * y) + sum(after)).backward();
      return std::make_tuple(grads_of({p.w1, p.b1, p.w2, x}), y.to_vector<float>(), gen.state(),
                             default_generator().state());
    };
    int plain_calls = 0, ckpt_calls = 0;
    const auto plain = run(false, &plain_calls);
    const auto ckpt = run(true, &ckpt_calls);
    CHECK(std::get<0>(ckpt) == std::get<0>(plain));  // exact, every element
    CHECK(std::get<1>(ckpt) == std::get<1>(plain));
    CHECK(std::get<2>(ckpt) == std::get<2>(plain));  // the outer stream did not move
    CHECK(std::get<3>(ckpt) == std::get<3>(plain));
    CHECK(plain_calls == 1);
    CHECK(ckpt_calls == 2);  // the forward, then one recomputation
    CHECK_FALSE(autograd::is_recomputing());
  }
}

TEST_CASE("checkpoint: the recomputation sees the forward's autocast state", "[autograd][checkpoint]") {
  const RestoreBackends restore;
  for (const auto& backends : backend_sets()) {
    BackendRegistry::instance().restrict_to(backends);
    INFO("backends: " << (backends.empty() ? "all loaded" : backends[0]));
    const Params p;
    Generator gen(1);
    const Tensor x = test::random_tensor({6, 12}, DType::F32, 15);
    std::vector<bool> autocast_seen;
    const auto f = [&](const Tensor& in) {
      autocast_seen.push_back(AutocastMode::is_enabled());
      return segment(p, gen, in);
    };
    const auto run = [&](bool ckpt) {
      p.zero_grad();
      gen.manual_seed(1);
      default_generator().manual_seed(2);
      Tensor y;
      {
        const amp::AutocastRegion region(DType::BF16);
        y = ckpt ? checkpoint(f, x) : f(x);
      }
      sum(y.to(DType::F32)).backward();  // outside the region, as a training step does
      return grads_of(p.all());
    };
    const auto plain = run(false);
    autocast_seen.clear();
    const auto ckpt = run(true);
    REQUIRE(autocast_seen == std::vector<bool>{true, true});  // the recompute ran under autocast too
    CHECK(ckpt == plain);
  }
}

TEST_CASE("checkpoint: under no_grad it only runs the function", "[autograd][checkpoint]") {
  const Params p;
  Generator gen(3);
  int calls = 0;
  NoGradGuard no_grad;
  const Tensor y = checkpoint([&](const Tensor& in) { return segment(p, gen, in, &calls); },
                              test::random_tensor({2, 12}, DType::F32, 16));
  CHECK(calls == 1);
  CHECK_FALSE(y.requires_grad());
  CHECK(y.grad_fn() == nullptr);
}

TEST_CASE("checkpoint: retain_graph recomputes once per backward pass and accumulates", "[autograd][checkpoint]") {
  const Params p;
  Generator gen(4);
  const Tensor x = test::random_tensor({3, 12}, DType::F32, 17);
  int calls = 0;
  const Tensor y = checkpoint([&](const Tensor& in) { return segment(p, gen, in, &calls); }, x);
  const Tensor loss = sum(y);
  loss.backward(Tensor(), /*retain_graph=*/true);
  const auto once = grads_of(p.all());
  loss.backward();
  CHECK(calls == 3);
  const auto twice = grads_of(p.all());
  for (size_t k = 0; k < once.size(); ++k)
    for (size_t i = 0; i < once[k].size(); ++i) CHECK(twice[k][i] == once[k][i] + once[k][i]);
  CHECK_THROWS_WITH(loss.backward(), Catch::Contains("second time"));
}

TEST_CASE("checkpoint: nested segments give the plain gradients", "[autograd][checkpoint]") {
  const RestoreBackends restore;
  for (const auto& backends : backend_sets()) {
    BackendRegistry::instance().restrict_to(backends);
    INFO("backends: " << (backends.empty() ? "all loaded" : backends[0]));
    const Params p;
    Generator gen(5);
    const Tensor x = test::random_tensor({4, 12}, DType::F32, 18).set_requires_grad(true);
    const auto inner = [&](const Tensor& in) { return dropout(relu(matmul(in, p.w1) + p.b1), 0.5, true, &gen); };
    const auto outer = [&](const Tensor& in) { return tanh(matmul(checkpoint(inner, in * 2.0), p.w2)); };
    const auto run = [&](bool ckpt) {
      p.zero_grad();
      x.set_grad(Tensor());
      gen.manual_seed(5);
      const Tensor y = ckpt ? checkpoint(outer, x) : tanh(matmul(inner(x * 2.0), p.w2));
      sum(y * y).backward();
      return std::make_pair(grads_of({p.w1, p.b1, p.w2, x}), gen.state());
    };
    const auto plain = run(false);
    const auto nested = run(true);
    CHECK(nested.first == plain.first);
    CHECK(nested.second == plain.second);
  }
}

TEST_CASE("checkpoint: a segment that runs other ops when recomputed is an error", "[autograd][checkpoint]") {
  const Params p;
  int calls = 0;
  const Tensor y = checkpoint(
      [&](const Tensor& in) {
        const Tensor h = matmul(in, p.w1);
        return ++calls == 1 ? exp(h) : sigmoid(h);  // a branch on state that changed
      },
      test::random_tensor({2, 12}, DType::F32, 19));
  CHECK_THROWS_WITH(sum(y).backward(), Catch::Contains("must run the same ops"));
}

TEST_CASE("checkpoint: a segment keeps only its input between forward and backward", "[autograd][checkpoint]") {
  const Params p;
  const Tensor x = test::random_tensor({64, 12}, DType::F32, 20);
  std::vector<std::weak_ptr<Storage>> inside;
  const auto f = [&](const Tensor& in) {
    const Tensor h = relu(matmul(in, p.w1) + p.b1);
    inside.push_back(h.storage());
    return matmul(exp(h), p.w2);
  };
  const Tensor plain = f(x);
  CHECK_FALSE(inside.back().expired());  // relu's and exp's nodes keep h (and exp's output) in the plain run
  const Tensor y = checkpoint(f, x);
  CHECK(inside.back().expired());  // the checkpointed run keeps none of them
  sum(y).backward();
}

}  // namespace ingot
