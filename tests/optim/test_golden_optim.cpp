// Parity with torch.optim on committed fixtures (tests/golden/make_optim.py): 10-step trajectories
// fed with torch's recorded gradients, on every loaded CPU backend; a state_dict round trip in the
// middle of a trajectory; clip_grad_norm_ values and scaling.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <memory>
#include <string>

#include "ingot/io/safetensors.h"
#include "ingot/ops/creation.h"
#include "ingot/optim/adam.h"
#include "ingot/optim/clip_grad.h"
#include "ingot/optim/sgd.h"
#include "ingot/runtime/plugin_loader.h"
#include "ingot/runtime/registry.h"
#include "test_support.h"

namespace ingot::optim {
namespace {

const char* const kCases[] = {"sgd",     "sgd_momentum", "sgd_nesterov_wd", "sgd_dampening", "sgd_groups",    "adam",
                              "adam_wd", "adamw",        "adamw_groups",    "adam_amsgrad",  "adamw_large_wd"};

// f32 trajectories: torch rounds after every tensor op, Ingot's kernels once per element.
constexpr double kParamAtol = 2e-6, kParamRtol = 1e-5;
constexpr double kStateAtol = 1e-6, kStateRtol = 1e-5;

struct Golden {
  io::SafetensorsFile file;
  std::string type;
  int steps = 0;
  int params = 0;
  nlohmann::json groups;

  const Tensor* find(const std::string& key) const {
    auto it = file.tensors.find(key);
    return it == file.tensors.end() ? nullptr : &it->second;
  }
  const Tensor& at(const std::string& key) const {
    const Tensor* t = find(key);
    INGOT_CHECK(t != nullptr, "golden fixture: no tensor '{}'", key);
    return *t;
  }
};

Golden load_golden(const std::string& name) {
  Golden g;
  g.file = io::load_safetensors(std::filesystem::path(INGOT_GOLDEN_DIR) / ("optim_" + name + ".safetensors"));
  g.type = g.file.metadata.at("type");
  g.steps = std::stoi(g.file.metadata.at("steps"));
  g.params = std::stoi(g.file.metadata.at("params"));
  g.groups = nlohmann::json::parse(g.file.metadata.at("groups"));
  return g;
}

// The fixture's group options by name: its keys are the options' names, "params" aside.
GroupOptions options_of(const std::string& type, const nlohmann::json& j) {
  GroupOptions o(type == "sgd" ? static_cast<const OptionList&>(SgdOptions::table())
                               : (type == "adam" ? AdamOptions::table() : AdamWOptions::table()));
  for (const auto& [key, v] : j.items()) {
    if (key != "params") o.set(key, v.is_boolean() ? (v.get<bool>() ? 1.0 : 0.0) : v.get<double>());
  }
  return o;
}

// The fixture's optimizer over `params`: group 0 through the constructor, the rest added.
std::unique_ptr<Optimizer> make(const Golden& g, const std::vector<Tensor>& params) {
  std::unique_ptr<Optimizer> opt;
  for (size_t gi = 0; gi < g.groups.size(); ++gi) {
    ParamGroup group;
    for (int k : g.groups[gi]["params"]) group.params.push_back(params[static_cast<size_t>(k)]);
    group.options = options_of(g.type, g.groups[gi]);
    if (gi > 0) {
      opt->add_param_group(group);
      continue;
    }
    if (g.type == "sgd") {
      opt = std::make_unique<SGD>(group.params, SgdOptions::table().read(group.options));
    } else {
      const AdamWOptions a(AdamOptions::table().read(group.options));
      if (g.type == "adam") {
        opt = std::make_unique<Adam>(group.params, a);
      } else {
        opt = std::make_unique<AdamW>(group.params, a);
      }
    }
  }
  return opt;
}

std::vector<Tensor> initial_params(const Golden& g) {
  std::vector<Tensor> params;
  for (int k = 0; k < g.params; ++k) {
    Tensor p = g.at("init." + std::to_string(k)).clone();
    p.set_requires_grad(true);
    params.push_back(p);
  }
  return params;
}

// Feeds step s's gradients (none for params torch gave none), steps, compares every param.
void run_step(const Golden& g, Optimizer& opt, const std::vector<Tensor>& params, int s) {
  opt.zero_grad();
  for (int k = 0; k < g.params; ++k) {
    if (const Tensor* grad = g.find("grad." + std::to_string(s) + "." + std::to_string(k))) {
      params[static_cast<size_t>(k)].set_grad(grad->clone());
    }
  }
  opt.step();
  for (int k = 0; k < g.params; ++k) {
    INFO("step " << s << ", param " << k);
    INGOT_REQUIRE_CLOSE(params[static_cast<size_t>(k)], g.at("param." + std::to_string(s) + "." + std::to_string(k)),
                        kParamAtol, kParamRtol);
  }
}

using test::cpu_backends;

using test::RestoreBackends;

}  // namespace

TEST_CASE("optim golden: torch.optim trajectories on every CPU backend", "[optim][golden]") {
  RestoreBackends restore;
  for (const std::string& backend : cpu_backends()) {
    BackendRegistry::instance().restrict_to({backend});
    for (const char* name : kCases) {
      INFO("backend " << backend << ", case " << name);
      const Golden g = load_golden(name);
      const std::vector<Tensor> params = initial_params(g);
      std::unique_ptr<Optimizer> opt = make(g, params);
      for (int s = 0; s < g.steps; ++s) run_step(g, *opt, params, s);
      // torch's final per-parameter state: moments / momentum buffers and Adam's step counts
      // (the fixture names state by model parameter k, state_dict by position over the groups)
      const OptimizerState st = opt->state_dict();
      std::vector<int> position(static_cast<size_t>(g.params));
      int next = 0;
      for (const auto& group : g.groups)
        for (int k : group["params"]) position[static_cast<size_t>(k)] = next++;
      for (const auto& [key, expected] : g.file.tensors) {
        if (key.rfind("state.", 0) != 0) continue;
        INFO("state " << key);
        const size_t dot = key.find('.', 6);
        const int k = std::stoi(key.substr(6, dot - 6));
        const std::string ours = "state." + std::to_string(position[static_cast<size_t>(k)]) + key.substr(dot);
        if (key.substr(dot) == ".step") {
          REQUIRE(st.scalars.at(ours) == std::to_string(static_cast<int64_t>(expected.item())));
        } else {
          REQUIRE(st.tensors.count(ours) == 1);
          INGOT_REQUIRE_CLOSE(st.tensors.at(ours), expected, kStateAtol, kStateRtol);
        }
      }
    }
  }
}

TEST_CASE("optim golden: a state_dict round trip mid-trajectory continues identically", "[optim][golden]") {
  for (const char* name : {"sgd_momentum", "adamw", "adam_amsgrad", "sgd_groups", "adamw_large_wd"}) {
    INFO("case " << name);
    const Golden g = load_golden(name);
    const std::vector<Tensor> params = initial_params(g);
    std::unique_ptr<Optimizer> opt = make(g, params);
    const int half = g.steps / 2;
    for (int s = 0; s < half; ++s) run_step(g, *opt, params, s);
    // a fresh optimizer over copies of the parameters, restored from the checkpoint state
    std::vector<Tensor> copies;
    for (const Tensor& p : params) copies.push_back(p.detach().clone().set_requires_grad(true));
    std::unique_ptr<Optimizer> resumed = make(g, copies);
    resumed->param_groups()[0].options.set_lr(123.0);  // overwritten by the state
    resumed->load_state_dict(opt->state_dict());
    REQUIRE(resumed->param_groups()[0].options.lr() == opt->param_groups()[0].options.lr());
    for (int s = half; s < g.steps; ++s) {
      run_step(g, *opt, params, s);
      run_step(g, *resumed, copies, s);
      for (size_t k = 0; k < params.size(); ++k) INGOT_REQUIRE_CLOSE(copies[k], params[k], 0.0, 0.0);
    }
  }
}

TEST_CASE("optim golden: clip_grad_norm_ matches torch", "[optim][golden]") {
  const io::SafetensorsFile f =
      io::load_safetensors(std::filesystem::path(INGOT_GOLDEN_DIR) / "optim_clip.safetensors");
  auto params_with_grads = [&] {
    std::vector<Tensor> params;
    for (int k = 0; k < 3; ++k) {
      const Tensor& g = f.tensors.at("grad." + std::to_string(k));
      Tensor p = zeros(g.shape());
      p.set_grad(g.clone());
      params.push_back(p);
    }
    return params;
  };
  // norms: f32 sums of a few dozen values
  const struct {
    const char* key;
    double type;
  } norms[] = {{"norm.2", 2.0}, {"norm.inf", kInfNorm}, {"norm.1", 1.0}};
  for (const auto& n : norms) {
    INFO("norm " << n.key);
    const double expected = f.tensors.at(n.key).item();
    const double got = clip_grad_norm_(params_with_grads(), 1e9, n.type);
    REQUIRE(std::abs(got - expected) <= 1e-6 + 1e-6 * std::abs(expected));
  }
  const std::vector<Tensor> params = params_with_grads();
  const double norm = clip_grad_norm_(params, 1.0);
  REQUIRE(norm > 1.0);
  for (int k = 0; k < 3; ++k) {
    INGOT_REQUIRE_CLOSE(params[static_cast<size_t>(k)].grad(), f.tensors.at("clipped." + std::to_string(k)), 1e-7,
                        1e-6);
  }
}

}  // namespace ingot::optim
