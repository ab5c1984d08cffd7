// Module bookkeeping: torch's state_dict names and order, traversal, train/eval, strict and
// non-strict load_state_dict with its error messages, repr and summary.
#include <catch2/catch.hpp>

#include "ingot/base/grad_mode.h"
#include "ingot/nn/nn.h"
#include "ingot/ops/ops.h"
#include "test_support.h"

using namespace ingot;
using namespace ingot::nn;

namespace {

std::vector<std::string> names(const NamedTensors& t) {
  std::vector<std::string> out;
  for (const auto& [n, x] : t) out.push_back(n);
  return out;
}

std::map<std::string, Tensor> cloned(const StateDict& s) {
  std::map<std::string, Tensor> m;
  for (const auto& [n, t] : s) m[n] = t.detach().clone();
  return m;
}

}  // namespace

TEST_CASE("nn module: state_dict names equal torch.nn's", "[nn]") {
  Generator g(1);
  auto net = std::make_shared<Sequential>(std::initializer_list<ModulePtr>{
      std::make_shared<Linear>(4, 3, true, &g), std::make_shared<ReLU>(), std::make_shared<BatchNorm2d>(3)});
  const std::vector<std::string> expected = {
      "0.weight", "0.bias", "2.weight", "2.bias", "2.running_mean", "2.running_var", "2.num_batches_tracked"};
  CHECK(names(net->state_dict()) == expected);
  CHECK(names(net->named_parameters()) == std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"});
  CHECK(names(net->named_buffers()) ==
        std::vector<std::string>{"2.running_mean", "2.running_var", "2.num_batches_tracked"});
  CHECK(names(net->named_parameters(true, "model")).front() == "model.0.weight");
  CHECK(net->named_parameters(false).empty());
  const Tensor nbt = net->state_dict().back().second;
  CHECK(nbt.dtype() == DType::I64);
  CHECK(nbt.dim() == 0);
  for (const Tensor& p : net->parameters()) {
    CHECK(p.requires_grad());
    CHECK(p.is_leaf());
  }
  for (const Tensor& b : net->buffers()) CHECK_FALSE(b.requires_grad());
}

TEST_CASE("nn module: BasicBlock and resnet names follow the option-B convention", "[nn]") {
  Generator g(2);
  BasicBlock same(4, 4, 1, &g);
  CHECK_FALSE(same.has_projection());
  CHECK(names(same.named_parameters()) ==
        std::vector<std::string>{"conv1.weight", "bn1.weight", "bn1.bias", "conv2.weight", "bn2.weight", "bn2.bias"});
  BasicBlock proj(4, 8, 2, &g);
  CHECK(proj.has_projection());
  const auto sd = names(proj.state_dict());
  CHECK(sd.size() == 18);
  CHECK(sd[12] == "shortcut.0.weight");
  CHECK(sd[13] == "shortcut.1.weight");
  CHECK(sd[17] == "shortcut.1.num_batches_tracked");

  ResNetOptions o;
  auto r20 = make_resnet(o, &g);
  CHECK(r20->num_parameters() == 272474);  // torch: the same model in make_nn.py
  CHECK(r20->state_dict().size() == 128);
  const auto rn = names(r20->state_dict());
  CHECK(std::find(rn.begin(), rn.end(), "layer1.0.bn1.running_mean") != rn.end());
  CHECK(std::find(rn.begin(), rn.end(), "layer3.2.shortcut.0.weight") == rn.end());
  CHECK(std::find(rn.begin(), rn.end(), "layer3.0.shortcut.1.bias") != rn.end());
  CHECK(rn.back() == "fc.bias");
  o.depth = 8;
  CHECK(make_resnet(o, &g)->num_parameters() == 78042);
  o.depth = 10;
  CHECK_THROWS_WITH(make_resnet(o, &g), Catch::Contains("6n + 2"));
}

TEST_CASE("nn module: preset parameter counts equal torch's", "[nn]") {
  CHECK(make_mlp(MlpOptions{})->num_parameters() == 535818);
  CHECK(make_simple_cnn(SimpleCnnOptions{})->num_parameters() == 421738);
  const auto cnn = names(make_simple_cnn(SimpleCnnOptions{})->state_dict());
  CHECK(cnn.front() == "0.weight");
  CHECK(cnn[6] == "4.weight");
  CHECK(cnn.back() == "12.bias");
}

TEST_CASE("nn module: train / eval reach every descendant", "[nn]") {
  auto r = make_resnet(ResNetOptions{8, 4, 3, 10});
  CHECK(r->is_training());
  r->eval();
  for (auto& [n, m] : r->named_modules()) CHECK_FALSE(m->is_training());
  r->train();
  for (auto& [n, m] : r->named_modules()) CHECK(m->is_training());
  CHECK(r->named_modules().front().first.empty());
  CHECK(r->children().size() == 9);
}

TEST_CASE("nn module: load_state_dict copies by name and reports problems", "[nn]") {
  Generator g1(1), g2(2);
  auto a = make_mlp(MlpOptions{{6, 5, 2}, "relu", 0.0}, &g1);
  auto b = make_mlp(MlpOptions{{6, 5, 2}, "relu", 0.0}, &g2);
  const Tensor w_before = b->named_parameters()[0].second;
  b->load_state_dict(a->state_dict());
  for (size_t i = 0; i < a->parameters().size(); ++i) {
    INGOT_REQUIRE_CLOSE(b->parameters()[i], a->parameters()[i], 0.0, 0.0);
  }
  CHECK(b->named_parameters()[0].second.same_tensor(w_before));  // copied into, not replaced
  CHECK(b->parameters()[0].requires_grad());

  auto sd = cloned(a->state_dict());
  sd.erase("1.bias");
  sd["extra.weight"] = zeros({2});
  CHECK_THROWS_WITH(b->load_state_dict(sd),
                    Catch::Contains("missing keys [1.bias]") && Catch::Contains("unexpected keys [extra.weight]"));
  b->load_state_dict(sd, /*strict=*/false);  // tolerates both
  sd = cloned(a->state_dict());
  sd["3.weight"] = zeros({2, 4});
  CHECK_THROWS_AS(b->load_state_dict(sd, false), ShapeError);
  CHECK_THROWS_WITH(b->load_state_dict(sd), Catch::Contains("3.weight: checkpoint [2, 4] vs model [2, 5]"));
  sd["3.weight"] = zeros({2, 5}, DType::F64);  // dtypes are converted
  b->load_state_dict(sd);
  CHECK(b->named_parameters()[2].second.dtype() == DType::F32);
}

TEST_CASE("nn module: registration rejects bad and duplicate names", "[nn]") {
  Module m("Custom");
  m.register_parameter("w", zeros({2}));
  CHECK_THROWS_WITH(m.register_buffer("w", zeros({2})), Catch::Contains("already registered"));
  CHECK_THROWS_WITH(m.register_parameter("a.b", zeros({2})), Catch::Contains("contain no '.'"));
  CHECK_THROWS_WITH(m.forward(zeros({2})), Catch::Contains("no forward"));
}

TEST_CASE("nn module: repr and summary", "[nn]") {
  auto net = make_mlp(MlpOptions{{784, 512, 10}, "relu", 0.2});
  const std::string r = net->repr();
  CHECK_THAT(r, Catch::StartsWith("Sequential(\n  (0): Flatten(start_dim=1, end_dim=-1)\n"));
  CHECK_THAT(r, Catch::Contains("(1): Linear(in_features=784, out_features=512, bias=True)"));
  CHECK_THAT(r, Catch::Contains("(3): Dropout(p=0.2, inplace=False)"));
  const std::string s = net->summary();
  CHECK_THAT(s, Catch::Contains("401,920"));
  CHECK_THAT(s, Catch::EndsWith("total: 407,050 parameters"));
  Conv2dOptions o;
  o.stride = {2, 2};
  o.padding = {1, 1};
  o.bias = false;
  CHECK(Conv2d(3, 16, 3, o).repr() == "Conv2d(3, 16, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), bias=False)");
}

TEST_CASE("nn module: to(dtype) converts floating parameters and buffers in place, like torch", "[nn]") {
  SimpleCnnOptions o;
  o.height = o.width = 8;
  o.channels = 4;
  o.hidden = 8;
  auto net = make_simple_cnn(o);
  net->eval();
  const Tensor x = test::random_tensor({2, 1, 8, 8}, DType::F32, 5);
  Tensor expected;
  {
    NoGradGuard no_grad;
    expected = net->forward(x).strided().contiguous();
  }
  const std::vector<Tensor> handles = net->parameters();
  net->to(DType::BF16);
  for (const auto& [name, t] : net->state_dict())
    CHECK(t.dtype() == (name.find("num_batches_tracked") != std::string::npos ? DType::I64 : DType::BF16));
  const std::vector<Tensor> after = net->parameters();
  REQUIRE(after.size() == handles.size());
  for (size_t i = 0; i < after.size(); ++i) CHECK(after[i].impl_ptr() == handles[i].impl_ptr());  // same handles
  NoGradGuard no_grad;
  const Tensor y = net->forward(x.to(DType::BF16)).to(DType::F32).strided().contiguous();
  INGOT_REQUIRE_CLOSE(y, expected, 5e-2, 5e-2);  // bf16 keeps 8 bits of mantissa
  CHECK_THROWS_WITH(net->to(DType::I32), Catch::Contains("not a floating dtype"));
}
