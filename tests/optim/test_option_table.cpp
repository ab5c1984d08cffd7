// Optimizer options declared once (OptionList, GroupOptions, OptionTable): ranges and how messages
// name options, declaration mistakes, and an optimizer written as an extension would write it,
// whose config keys, param groups, checkpoint and resolved config all come from its declaration.
#include <catch2/catch.hpp>

#include <cmath>

#include "ingot/base/error.h"
#include "ingot/base/grad_mode.h"
#include "ingot/ops/creation.h"
#include "ingot/ops/elementwise.h"
#include "ingot/optim/adam.h"
#include "ingot/optim/optimizer_config.h"
#include "ingot/optim/option_table.h"
#include "ingot/optim/sgd.h"
#include "test_support.h"

namespace ingot::optim {
namespace {

/// Lion (Chen et al. 2023), as a third party would add it: its options as a struct declared once,
/// elementwise ops for the update (an extension cannot add a fused op).
struct LionOptions {
  double lr = 1e-4;
  double beta1 = 0.9;
  double beta2 = 0.99;
  double weight_decay = 0.0;

  static const OptionTable<LionOptions>& table() {
    static const OptionTable<LionOptions> t =
        OptionTable<LionOptions>()
            .number("lr", &LionOptions::lr, at_least(0.0), "learning rate")
            .numbers("betas", {{"beta1", &LionOptions::beta1}, {"beta2", &LionOptions::beta2}}, half_open(0.0, 1.0),
                     "interpolation of the update and decay of the moment")
            .number("weight_decay", &LionOptions::weight_decay, at_least(0.0), "decoupled weight decay");
    return t;
  }
};

class Lion final : public Optimizer {
 public:
  Lion(const std::vector<GroupSpec>& groups, const LionOptions& o) : Optimizer(LionOptions::table().write(o)) {
    for (const GroupSpec& g : groups) add_param_group(g);
  }
  std::string type() const override { return "lion"; }

 protected:
  std::vector<std::string> state_names() const override { return {"exp_avg"}; }
  void update_group(const ParamGroup& group, const std::vector<ParamState*>& states, const std::vector<Tensor>& params,
                    const std::vector<Tensor>& grads) override {
    const LionOptions o = LionOptions::table().read(group.options);
    for (size_t k = 0; k < params.size(); ++k) {
      auto& t = states[k]->tensors;
      if (!t.count("exp_avg")) t["exp_avg"] = zeros_like(params[k]);
      const Tensor& m = t["exp_avg"];
      const Tensor update = sign(m * o.beta1 + grads[k] * (1.0 - o.beta1));
      params[k].copy_(params[k] * (1.0 - o.lr * o.weight_decay) - update * o.lr);
      m.copy_(m * o.beta2 + grads[k] * (1.0 - o.beta2));
      ++states[k]->step;
    }
  }
};

/// An optimizer over any OptionList, for the base's checks of it.
class Bare final : public Optimizer {
 public:
  explicit Bare(GroupOptions defaults) : Optimizer(std::move(defaults)) {}
  std::string type() const override { return "bare"; }

 protected:
  std::vector<std::string> state_names() const override { return {}; }
  void update_group(const ParamGroup&, const std::vector<ParamState*>&, const std::vector<Tensor>&,
                    const std::vector<Tensor>&) override {}
};

OptimizerRegistry::Entry lion_type() {
  return optimizer_type(
      "lion", LionOptions::table(),
      [](const std::vector<GroupSpec>& groups, const GroupOptions& o) -> std::unique_ptr<Optimizer> {
        return std::make_unique<Lion>(groups, LionOptions::table().read(o));
      },
      "Lion (sign of an interpolated momentum)");
}

NamedParams two_params() {
  Tensor w = Tensor::from_vector<float>({1.0f, -2.0f, 0.5f, 4.0f}, {2, 2});
  Tensor b = Tensor::from_vector<float>({0.25f, -0.75f}, {2});
  w.set_requires_grad(true);
  b.set_requires_grad(true);
  return {{"fc.weight", w}, {"fc.bias", b}};
}

}  // namespace

TEST_CASE("optim options: ranges, option labels and declaration mistakes", "[optim][options]") {
  CHECK(at_least(0.0).str() == ">= 0");
  CHECK(closed(0.0, 1.0).str() == "in [0, 1]");
  CHECK(half_open(0.0, 1.0).str() == "in [0, 1)");
  CHECK(half_open(0.0, 1.0).contains(0.0));
  CHECK_FALSE(half_open(0.0, 1.0).contains(1.0));
  CHECK(closed(0.0, 1.0).contains(1.0));
  CHECK_FALSE(at_least(0.0).contains(std::nan("")));

  const OptionList& adam = AdamOptions::table();
  CHECK(adam.names() == "lr, weight_decay, beta1, beta2, eps, amsgrad");
  CHECK(adam.label(adam.find("beta2")) == "betas[1] (beta2)");
  CHECK(adam.label(adam.find("eps")) == "eps");
  CHECK(adam.same_names(AdamWOptions::table()));
  CHECK_FALSE(adam.same_names(SgdOptions::table()));
  CHECK(AdamWOptions::table().specs()[adam.find("weight_decay")].default_value == 1e-2);

  // (static: GroupOptions and optimizers keep a pointer to their list)
  static const OptionList list = OptionList().number("lr", 0.1, at_least(0.0), "").flag("warm", false, "");
  OptionList more = list;
  CHECK_THROWS_WITH(more.number("lr", 1.0, at_least(0.0), ""), Catch::Contains("'lr'"));
  CHECK_THROWS_WITH(more.numbers("warm", {{"a", 0.0}, {"b", 0.0}}, at_least(0.0), ""), Catch::Contains("'warm'"));

  GroupOptions o(list);
  CHECK(o.lr() == 0.1);
  CHECK_FALSE(o.flag("warm"));
  CHECK_THROWS_WITH(o.get("momentum"), Catch::Contains("no option 'momentum'") && Catch::Contains("lr, warm"));
  o.set("lr", -1.0);
  CHECK_THROWS_WITH(o.check("mine"), Catch::Contains("mine: lr is -1, expected >= 0"));
  o.set("lr", 0.1);
  o.set("warm", 0.5);
  CHECK_THROWS_WITH(o.check("mine"), Catch::Contains("warm is 0.5, expected true (1) or false (0)"));

  // every optimizer needs an lr, which schedules set; a group takes its own optimizer's options
  static const OptionList no_lr = OptionList().number("rate", 0.1, at_least(0.0), "");
  CHECK_THROWS_WITH(Bare(GroupOptions(no_lr)), Catch::Contains("(rate) have no number 'lr'"));
  Bare bare{GroupOptions(list)};
  ParamGroup sgd_group{{test::random_tensor({2}, DType::F32, 1)}, GroupOptions(SgdOptions::table()), 0.0};
  CHECK_THROWS_WITH(bare.add_param_group(sgd_group), Catch::Contains("expected this optimizer's (lr, warm)"));
  bare.add_param_group(ParamGroup{sgd_group.params, GroupOptions(), 0.0});  // empty: the defaults
  CHECK(bare.param_groups()[0].options.lr() == 0.1);
}

TEST_CASE("optim options: declared ranges, overrides and state sizes apply to the built-ins", "[optim][options]") {
  const Tensor a = test::random_tensor({3}, DType::F32, 1);
  CHECK_THROWS_WITH(SGD({a}, SgdOptions{0.1, 0.9, 1.5, 0.0, false}), Catch::Contains("sgd: dampening is 1.5"));
  CHECK_THROWS_WITH(SGD({a}, SgdOptions{-0.1}), Catch::Contains("sgd: lr is -0.1, expected >= 0"));
  GroupSpec spec{{a}, {{"wieght_decay", 0.1}}};
  CHECK_THROWS_WITH(SGD(std::vector<GroupSpec>{spec}),
                    Catch::Contains("'wieght_decay'") && Catch::Contains("lr, weight_decay, momentum"));
  CHECK(SGD({a}).state_tensors_per_param() == 0);
  CHECK(SGD({a}, SgdOptions{0.1, 0.9}).state_tensors_per_param() == 1);
  AdamOptions ams;
  ams.amsgrad = true;
  CHECK(Adam({a}).state_tensors_per_param() == 2);
  CHECK(Adam({a}, ams).state_tensors_per_param() == 3);
  CHECK(Lion(single_group({a}), LionOptions{}).state_tensors_per_param() == 1);  // its state_names()
}

TEST_CASE("optim options: an extension's optimizer gets keys, groups, checkpoints and its resolved config",
          "[optim][options]") {
  OptimizerRegistry registry("optimizer");
  registry.add(lion_type());
  auto build = [&](const std::string& yaml) {
    return registry.make(YAML::Load(yaml), "test.yaml", "opt", two_params());
  };

  std::unique_ptr<Optimizer> lion = build("type: lion\nlr: 0.1\nbetas: [0.5, 0.75]\nweight_decay: 0.5\n");
  REQUIRE(lion->param_groups().size() == 2);  // decay / no decay: it declares weight_decay
  CHECK(lion->param_groups()[0].options.get("weight_decay") == 0.5);
  CHECK(lion->param_groups()[1].options.get("weight_decay") == 0.0);
  CHECK(lion->defaults().get("beta2") == 0.75);
  CHECK(build("type: lion\n")->defaults().lr() == 1e-4);

  CHECK_THROWS_WITH(build("type: lion\nbeta: [0.5, 0.5]\n"),
                    Catch::Contains("test.yaml:2") && Catch::Contains("did you mean 'betas'"));
  CHECK_THROWS_WITH(build("type: lion\nlr: -1\n"), Catch::Contains("test.yaml:2") && Catch::Contains("lr"));
  CHECK_THROWS_WITH(build("type: lion\nbetas: [0.5, 1.0]\n"),
                    Catch::Contains("'betas' must be a list of two numbers in [0, 1), like [0.9, 0.99]"));

  const YAML::Node resolved = optimizer_to_yaml(*lion, true);
  CHECK(resolved["type"].as<std::string>() == "lion");
  CHECK(resolved["betas"][0].as<double>() == 0.5);
  CHECK(resolved["weight_decay"].as<double>() == 0.5);
  CHECK(resolved["no_decay_on_bias_and_norm"].as<bool>());
  CHECK_FALSE(resolved["momentum"]);

  // one step against the formula: w = w (1 - lr wd) - lr sign((1 - beta1) g) from m = 0
  const Tensor w = lion->param_groups()[0].params[0];
  w.set_grad(Tensor::from_vector<float>({0.5f, -0.5f, 0.0f, 2.0f}, {2, 2}));
  lion->step();
  INGOT_REQUIRE_CLOSE(w, Tensor::from_vector<float>({0.85f, -1.8f, 0.475f, 3.7f}, {2, 2}), 1e-6, 1e-6);
  // its updates are ordinary ops, not issued for a captured step: train.compile keeps its step eager
  CHECK_FALSE(lion->capturable());
  CHECK_THROWS_WITH(lion->prepare_step(), Catch::Contains("lion: its updates cannot be captured"));

  // the checkpoint holds its own options, and a fresh Lion continues from it
  const OptimizerState st = lion->state_dict();
  CHECK(st.scalars.at("group.0.beta1") == "0.5");
  CHECK(st.scalars.at("group.1.weight_decay") == "0");
  CHECK(st.scalars.count("group.0.momentum") == 0);
  std::unique_ptr<Optimizer> fresh = build("type: lion\n");
  fresh->load_state_dict(st);
  CHECK(fresh->param_groups()[0].options.get("beta1") == 0.5);
  CHECK(fresh->param_groups()[0].options.lr() == 0.1);
  INGOT_REQUIRE_CLOSE(fresh->state(0, 0).tensors.at("exp_avg"), lion->state(0, 0).tensors.at("exp_avg"), 0.0, 0.0);
  OptimizerState bad = st;
  bad.scalars["group.0.beta2"] = "1";
  CHECK_THROWS_WITH(fresh->load_state_dict(bad), Catch::Contains("lion: betas[1] (beta2) is 1, expected in [0, 1)"));
}

}  // namespace ingot::optim
