// Module hooks and surgery: forward pre/post hooks (also on layers that fusion would otherwise
// merge), replace_child by dotted path with state_dict names kept, get_submodule, named_modules.
#include <catch2/catch.hpp>

#include "ingot/base/grad_mode.h"
#include "ingot/nn/nn.h"
#include "ingot/ops/ops.h"
#include "test_support.h"

using namespace ingot;
using namespace ingot::nn;

namespace {

/// A Conv2d subclass that counts its forwards (what a masked or quantized layer would be).
class CountingConv final : public Conv2d {
 public:
  using Conv2d::Conv2d;
  Tensor forward(const Tensor& x) override {
    ++calls;
    return Conv2d::forward(x);
  }
  int calls = 0;
};

std::vector<std::string> keys(const StateDict& s) {
  std::vector<std::string> out;
  for (const auto& [n, t] : s) out.push_back(n);
  return out;
}

}  // namespace

TEST_CASE("module hooks: pre hooks change the input, post hooks the output, and both can be removed",
          "[nn][hooks]") {
  Generator g(3);
  auto lin = std::make_shared<Linear>(3, 2, true, &g);
  const Tensor x = test::random_tensor({4, 3}, DType::F32, 1);
  const Tensor plain = (*lin)(x);
  std::vector<std::string> order;
  const uint64_t pre = lin->register_forward_pre_hook([&](Module& m, const Tensor& in) -> std::optional<Tensor> {
    order.push_back("pre " + m.type_name());
    return in * 2.0;
  });
  const uint64_t post =
      lin->register_forward_hook([&](Module&, const Tensor& in, const Tensor& out) -> std::optional<Tensor> {
        order.push_back("post");
        CHECK(in.shape() == x.shape());
        return out + 1.0;
      });
  CHECK(lin->has_hooks());
  INGOT_REQUIRE_CLOSE((*lin)(x), add(matmul_ex(x * 2.0, lin->weight().transpose(0, 1), lin->bias()), 1.0), 1e-6, 1e-6);
  CHECK(order == std::vector<std::string>{"pre Linear", "post"});
  lin->remove_hook(pre);
  lin->remove_hook(post);
  lin->remove_hook(post);  // unknown now: a no-op
  CHECK_FALSE(lin->has_hooks());
  INGOT_REQUIRE_CLOSE((*lin)(x), plain, 0.0, 0.0);
}

TEST_CASE("module hooks: a hooked layer inside a fusable run still runs through its hooks", "[nn][hooks][fusion]") {
  Generator g(4);
  auto net = std::make_shared<Sequential>(
      std::initializer_list<ModulePtr>{std::make_shared<Linear>(5, 4, true, &g), std::make_shared<ReLU>(),
                                       std::make_shared<Linear>(4, 3, true, &g)});
  const Tensor x = test::random_tensor({2, 5}, DType::F32, 2);
  const Tensor expected = (*net)(x);
  int seen = 0;
  Tensor captured;
  net->get_submodule("0")->register_forward_hook([&](Module&, const Tensor&, const Tensor& out) -> std::optional<Tensor> {
    ++seen;
    captured = out;  // the Linear's own output, before the ReLU: fusion must not hide it
    return std::nullopt;
  });
  INGOT_REQUIRE_CLOSE((*net)(x), expected, 1e-6, 1e-6);
  CHECK(seen == 1);
  REQUIRE(captured.defined());
  CHECK(captured.shape() == Shape{2, 4});
  CHECK(min(captured).item() < 0.0);  // pre-activation values
}

TEST_CASE("module surgery: replace_child by dotted path keeps names and order, BasicBlock runs the new layer",
          "[nn][hooks]") {
  Generator g(5);
  auto net = std::make_shared<Sequential>(std::initializer_list<ModulePtr>{
      std::make_shared<BasicBlock>(2, 2, 1, &g), std::make_shared<Flatten>()});
  net->eval();
  const Tensor x = test::random_tensor({1, 2, 4, 4}, DType::F32, 3);
  const Tensor before = (*net)(x);
  const std::vector<std::string> names_before = keys(net->state_dict());

  Conv2dOptions o;
  o.padding = {1, 1};
  o.bias = false;
  auto counting = std::make_shared<CountingConv>(2, 2, 3, o, &g);
  {
    NoGradGuard no_grad;
    counting->weight().copy_(std::static_pointer_cast<Conv2d>(net->get_submodule("0.conv1"))->weight());
  }
  net->replace_child("0.conv1", counting);
  CHECK(net->get_submodule("0.conv1") == counting);
  CHECK(keys(net->state_dict()) == names_before);
  INGOT_REQUIRE_CLOSE((*net)(x), before, 1e-5, 1e-5);
  CHECK(counting->calls == 1);

  bool found = false;
  for (const auto& [name, m] : net->named_modules()) found = found || (name == "0.conv1" && m == counting.get());
  CHECK(found);
  CHECK(net->get_submodule("0.nothing") == nullptr);
  REQUIRE_THROWS_WITH(net->replace_child("0.conv9", counting),
                      Catch::Contains("no child '0.conv9'") && Catch::Contains("conv1, bn1, conv2, bn2"));
  REQUIRE_THROWS_WITH(net->replace_child("7.conv1", counting), Catch::Contains("no module '7'"));
}
