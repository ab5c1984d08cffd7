// Optimizer base behaviour: groups and their checks, skipping parameters without gradients,
// zero_grad, state_dict validation (and states of the earlier format), momentum-free SGD without
// buffers, which backend runs the fused updates, and AdamW's decoupled decay against steps
// computed by hand.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "ingot/ops/creation.h"
#include "ingot/ops/elementwise.h"
#include "ingot/ops/multi_tensor.h"
#include "ingot/optim/adam.h"
#include "ingot/optim/sgd.h"
#include "ingot/runtime/backend.h"
#include "ingot/runtime/dispatch.h"
#include "ingot/runtime/plugin_loader.h"
#include "ingot/runtime/registry.h"
#include "test_support.h"

namespace ingot::optim {
namespace {

Tensor param(const Shape& shape, uint64_t seed) {
  Tensor p = test::random_tensor(shape, DType::F32, seed);
  p.set_requires_grad(true);
  return p;
}

/// One torch.optim.AdamW step (default betas and eps) in double: the parameter is scaled by
/// 1 - lr * weight_decay first, then takes the Adam update with this step's bias corrections.
void adamw_by_hand(std::vector<double>& p, std::vector<double>& m, std::vector<double>& v, const std::vector<double>& g,
                   double lr, double weight_decay, int64_t step) {
  const double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  const double bias1 = 1.0 - std::pow(beta1, static_cast<double>(step));
  const double bias2 = 1.0 - std::pow(beta2, static_cast<double>(step));
  for (size_t i = 0; i < p.size(); ++i) {
    p[i] *= 1.0 - lr * weight_decay;
    m[i] = beta1 * m[i] + (1.0 - beta1) * g[i];
    v[i] = beta2 * v[i] + (1.0 - beta2) * g[i] * g[i];
    p[i] -= lr / bias1 * m[i] / (std::sqrt(v[i]) / std::sqrt(bias2) + eps);
  }
}

using test::RestoreBackends;

}  // namespace

TEST_CASE("optim: groups take the defaults unless overridden, one group per parameter", "[optim]") {
  const Tensor a = param({3, 2}, 1), b = param({2}, 2);
  GroupSpec spec;
  spec.params = {b};
  spec.options["lr"] = 0.5;
  SGD sgd(std::vector<GroupSpec>{single_group({a})[0], spec}, SgdOptions{0.1, 0.9, 0.0, 1e-4, false});
  REQUIRE(sgd.param_groups().size() == 2);
  REQUIRE(sgd.param_groups()[0].options.lr() == 0.1);
  REQUIRE(sgd.param_groups()[1].options.lr() == 0.5);
  REQUIRE(sgd.param_groups()[1].initial_lr == 0.5);
  REQUIRE(sgd.param_groups()[1].options.get("momentum") == 0.9);
  REQUIRE_THROWS_WITH(sgd.add_param_group(single_group({a})[0]), Catch::Contains("already belongs"));
  REQUIRE_THROWS_WITH(SGD(std::vector<Tensor>{}), Catch::Contains("empty parameter list"));
  REQUIRE_THROWS_WITH(SGD({a}, SgdOptions{0.1, 0.0, 0.0, 0.0, true}), Catch::Contains("nesterov"));
  AdamOptions bad;
  bad.beta2 = 1.0;
  REQUIRE_THROWS_WITH(Adam({a}, bad), Catch::Contains("betas"));
  REQUIRE(AdamW({a}).defaults().get("weight_decay") == 1e-2);
  REQUIRE(Adam({a}).defaults().get("weight_decay") == 0.0);
  REQUIRE(Adam({a}).defaults().lr() == 1e-3);
}

TEST_CASE("optim: parameters without a gradient are skipped, zero_grad sets grads to none", "[optim]") {
  const Tensor a = param({4}, 3), b = param({2, 2}, 4);
  const std::vector<float> b0 = b.to_vector<float>();
  Adam adam({a, b}, AdamOptions{});
  a.set_grad(ones({4}));
  adam.step();
  REQUIRE(b.to_vector<float>() == b0);  // untouched, no state
  REQUIRE(adam.state(0, 1).tensors.empty());
  REQUIRE(adam.state(0, 0).step == 1);
  REQUIRE(a.is_leaf());  // the update ran under NoGradGuard: still a leaf parameter
  REQUIRE(a.requires_grad());
  // torch's first Adam step moves every element by lr (the normalised gradient is 1)
  INGOT_REQUIRE_CLOSE(a, test::random_tensor({4}, DType::F32, 3) - 1e-3, 1e-7, 1e-6);
  adam.zero_grad();
  REQUIRE_FALSE(a.grad().defined());
  adam.step();  // nothing has a gradient: nothing changes
  REQUIRE(adam.state(0, 0).step == 1);
}

TEST_CASE("optim: SGD without momentum keeps no buffers", "[optim]") {
  const Tensor a = param({5}, 5);
  SGD sgd({a}, SgdOptions{0.1, 0.0, 0.0, 0.0, false});
  a.set_grad(full({5}, 2.0));
  sgd.step();
  REQUIRE(sgd.state(0, 0).tensors.empty());
  INGOT_REQUIRE_CLOSE(a, test::random_tensor({5}, DType::F32, 5) - 0.2, 1e-7, 1e-6);
  // the op API itself: no buffers at all without momentum, and a clear error with
  auto o = make_attr<ingot_attr_sgd>();
  o.lr = 1.0;
  sgd_update({a}, {full({5}, 0.5)}, {}, o);
  INGOT_REQUIRE_CLOSE(a, test::random_tensor({5}, DType::F32, 5) - 0.7, 1e-6, 1e-6);
  o.momentum = 0.9;
  REQUIRE_THROWS_WITH(sgd_update({a}, {full({5}, 0.5)}, {}, o), Catch::Contains("momentum buffers"));
}

TEST_CASE("optim: load_state_dict refuses a state that does not fit, naming the key", "[optim]") {
  const Tensor a = param({3}, 6), b = param({2, 3}, 7);
  AdamW opt({a, b});
  a.set_grad(ones({3}));
  b.set_grad(ones({2, 3}));
  opt.step();
  const OptimizerState good = opt.state_dict();
  REQUIRE(good.tensors.count("state.1.exp_avg_sq") == 1);
  REQUIRE(good.scalars.at("state.0.step") == "1");
  REQUIRE(good.scalars.at("group.0.weight_decay") == "0.01");
  REQUIRE(good.scalars.count("group.0.momentum") == 0);  // SGD's, not AdamW's

  AdamW other({param({3}, 8), param({2, 3}, 9)});
  OptimizerState s = good;
  s.scalars["type"] = "sgd";
  REQUIRE_THROWS_WITH(other.load_state_dict(s), Catch::Contains("'sgd' optimizer"));
  s = good;
  s.tensors["state.1.exp_avg"] = zeros({3, 2});
  REQUIRE_THROWS_WITH(other.load_state_dict(s), Catch::Contains("state.1.exp_avg") && Catch::Contains("[3, 2]"));
  s = good;
  s.tensors["state.0.momentum_buffer"] = zeros({3});
  REQUIRE_THROWS_WITH(other.load_state_dict(s), Catch::Contains("not state of a adamw"));
  s = good;
  s.tensors["state.2.exp_avg"] = zeros({3});
  REQUIRE_THROWS_WITH(other.load_state_dict(s), Catch::Contains("does not name one of the 2 parameters"));
  s = good;
  s.scalars["group.0.params"] = "3";
  REQUIRE_THROWS_WITH(other.load_state_dict(s), Catch::Contains("group 0 has 3 parameters"));
  s = good;
  s.scalars["group.0.lr"] = "fast";
  REQUIRE_THROWS_WITH(other.load_state_dict(s), Catch::Contains("group.0.lr"));
  s = good;
  s.scalars.erase("groups");
  REQUIRE_THROWS_WITH(other.load_state_dict(s), Catch::Contains("missing scalar 'groups'"));
  REQUIRE(other.state(0, 0).tensors.empty());  // failed loads changed nothing
  other.load_state_dict(good);
  REQUIRE(other.state(0, 0).step == 1);
  // restored tensors are copies: stepping one optimizer leaves the other's state alone
  INGOT_REQUIRE_CLOSE(other.state(0, 1).tensors.at("exp_avg"), opt.state(0, 1).tensors.at("exp_avg"), 0.0, 0.0);
  REQUIRE_FALSE(other.state(0, 1).tensors.at("exp_avg").storage() == opt.state(0, 1).tensors.at("exp_avg").storage());
}

TEST_CASE("optim: a state from before each optimizer declared its own options still loads", "[optim]") {
  // Such checkpoints held the options of every built-in optimizer in each group; an optimizer
  // reads its own and passes over the rest.
  const Tensor a = param({3}, 13);
  SGD sgd({a}, SgdOptions{0.1, 0.9, 0.0, 0.0, true});
  a.set_grad(ones({3}));
  sgd.step();
  OptimizerState state = sgd.state_dict();
  REQUIRE(state.scalars.count("group.0.beta1") == 0);  // only its own options now
  REQUIRE(state.scalars.at("group.0.nesterov") == "true");
  for (const auto& [key, value] :
       {std::pair{"beta1", "0.9"}, {"beta2", "0.999"}, {"eps", "1e-08"}, {"amsgrad", "false"}})
    state.scalars[std::string("group.0.") + key] = value;
  SGD other({param({3}, 14)});
  other.load_state_dict(state);
  REQUIRE(other.param_groups()[0].options.get("momentum") == 0.9);
  REQUIRE(other.param_groups()[0].options.flag("nesterov"));
  INGOT_REQUIRE_CLOSE(other.state(0, 0).tensors.at("momentum_buffer"), ones({3}), 0.0, 0.0);
}

TEST_CASE("optim: the fused updates and their capturable forms run on cpu_onednn when it is loaded", "[optim]") {
  PluginLoader::instance().load_all();
  const Backend* onednn = nullptr;
  for (const auto& b : BackendRegistry::instance().backends())
    if (b->name() == "cpu_onednn") onednn = b.get();
  if (onednn == nullptr) {
    test::skip("cpu_onednn is not loaded");
    return;
  }
  const Tensor p = param({33}, 10), g = test::random_tensor({33}, DType::F32, 11);
  auto sgd = make_attr<ingot_attr_sgd>();
  sgd.lr = 0.1;  // no momentum: a 0-size placeholder buffer
  REQUIRE(select_backend(INGOT_OP_SGD_UPDATE, {p, g, Tensor::empty({0})}, {}, &sgd).name() == "cpu_onednn");
  auto adam = make_attr<ingot_attr_adam>();
  adam.lr = 1e-3, adam.beta1 = 0.9, adam.beta2 = 0.999, adam.eps = 1e-8, adam.step = 1, adam.amsgrad = 1;
  const std::vector<Tensor> in = {p, g, zeros({33}), zeros({33}), zeros({33})};
  REQUIRE(select_backend(INGOT_OP_ADAM_UPDATE, in, {}, &adam).name() == "cpu_onednn");
  // a transposed view is declined (the reference runs it)
  const Tensor t = param({4, 6}, 12).transpose(0, 1);
  const std::vector<Tensor> tin = {t, t, t, t, t};
  REQUIRE(select_backend(INGOT_OP_ADAM_UPDATE, tin, {}, &adam).name() != "cpu_onednn");
  // the capturable forms (lr and step in a float64 tensor first) too; a float32 one is declined
  const Tensor hyper = Tensor::from_vector<double>({1e-3, 1.0}, {2});
  REQUIRE(select_backend(INGOT_OP_SGD_UPDATE_CAPTURABLE, {hyper, p, g, Tensor::empty({0})}, {}, &sgd).name() ==
          "cpu_onednn");
  std::vector<Tensor> cin = in;
  cin.insert(cin.begin(), hyper);
  REQUIRE(select_backend(INGOT_OP_ADAM_UPDATE_CAPTURABLE, cin, {}, &adam).name() == "cpu_onednn");
  cin.front() = hyper.to(DType::F32);
  REQUIRE(select_backend(INGOT_OP_ADAM_UPDATE_CAPTURABLE, cin, {}, &adam).name() != "cpu_onednn");
}

TEST_CASE("optim: AdamW scales by 1 - lr * weight_decay before the Adam step, lr x weight_decay > 1 too", "[optim]") {
  // Values exact in f32, so that f32 and f64 start from the same numbers as the hand computation.
  const std::vector<double> init = {1.5, -0.75, 0.25, -2.0, 0.0};
  const std::vector<std::vector<double>> grads = {
      {0.5, -1.0, 0.125, 2.0, -0.375}, {-0.25, 0.75, 1.0, -0.5, 0.625}, {1.0, 0.5, -2.0, 0.25, 0.0625}};
  PluginLoader::instance().load_all();
  std::vector<std::string> backends = {"reference"};
  for (const auto& b : BackendRegistry::instance().backends()) {
    if (b.get() != &BackendRegistry::instance().reference() && b->device_kind() == DeviceKind::CPU)
      backends.push_back(b->name());
  }
  RestoreBackends restore;
  // lr x weight_decay 0.75 (lr != 1: scaling by lr twice or not at all would show) and 2 (the
  // factor is negative: decaying after the step would show)
  for (const auto& [lr, weight_decay] : {std::pair{0.5, 1.5}, std::pair{1.0, 2.0}}) {
    std::vector<double> p = init, m(init.size(), 0.0), v(init.size(), 0.0);
    std::vector<std::vector<double>> expected;
    for (size_t s = 0; s < grads.size(); ++s) {
      adamw_by_hand(p, m, v, grads[s], lr, weight_decay, static_cast<int64_t>(s) + 1);
      expected.push_back(p);
    }
    for (const std::string& backend : backends) {
      BackendRegistry::instance().restrict_to({backend});
      for (DType dtype : {DType::F64, DType::F32}) {
        Tensor w = Tensor::from_vector(init, {5}).to(dtype);
        w.set_requires_grad(true);
        AdamWOptions o;
        o.lr = lr;
        o.weight_decay = weight_decay;
        AdamW opt({w}, o);
        for (size_t s = 0; s < grads.size(); ++s) {
          INFO("lr " << lr << ", weight_decay " << weight_decay << ", backend " << backend << ", " << dtype_name(dtype)
                     << ", step " << s + 1);
          w.set_grad(Tensor::from_vector(grads[s], {5}).to(dtype));
          opt.step();
          const double tol = dtype == DType::F64 ? 1e-12 : 1e-5;
          INGOT_REQUIRE_CLOSE(w, Tensor::from_vector(expected[s], {5}).to(dtype), tol, tol);
        }
      }
    }
  }
}

}  // namespace ingot::optim
