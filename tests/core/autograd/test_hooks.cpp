// Post-accumulate-grad hooks: called once per backward on each leaf, after its .grad holds the
// sum so far; removable; refused on non-leaves.
#include <catch2/catch.hpp>

#include "ingot/autograd/hooks.h"
#include "ingot/ops/ops.h"

using namespace ingot;

TEST_CASE("autograd hooks: called after each accumulation with the gradient so far", "[autograd][hooks]") {
  const Tensor w = Tensor::from_vector<float>({1, 2}, Shape{2});
  w.set_requires_grad(true);
  std::vector<std::vector<float>> seen;
  const uint64_t id = autograd::register_post_accumulate_grad_hook(
      w, [&](const Tensor& leaf) { seen.push_back(leaf.grad().to_vector<float>()); });
  sum(mul(w, 3.0)).backward();
  sum(mul(w, w)).backward();  // accumulates: 3 + 2w
  REQUIRE(seen.size() == 2);
  CHECK(seen[0] == std::vector<float>{3, 3});
  CHECK(seen[1] == std::vector<float>{5, 7});
  autograd::remove_post_accumulate_grad_hook(w, id);
  sum(w).backward();
  CHECK(seen.size() == 2);
  const Tensor y = mul(w, 2.0);
  REQUIRE_THROWS_WITH(autograd::register_post_accumulate_grad_hook(y, [](const Tensor&) {}),
                      Catch::Contains("must be a leaf that requires grad"));
}
