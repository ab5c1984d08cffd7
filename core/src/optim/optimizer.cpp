// Optimizer base: groups, the step loop over parameters with gradients, zero_grad, and the
// checkpoint state (tensors "state.<i>.<name>", scalars for steps and the declared group options).
#include "ingot/optim/optimizer.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "ingot/base/error.h"
#include "ingot/base/grad_mode.h"

namespace ingot::optim {

namespace {

const std::string& scalar(const OptimizerState& s, const std::string& key) {
  auto it = s.scalars.find(key);
  INGOT_CHECK_AS(it != s.scalars.end(), InputError, "optimizer state: missing scalar '{}'", key);
  return it->second;
}

double parse_number(const std::string& key, const std::string& text) {
  size_t used = 0;
  double v = 0.0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  INGOT_CHECK_AS(used == text.size() && used > 0, InputError, "optimizer state: '{}' is '{}', expected a number", key,
                 text);
  return v;
}

int64_t parse_count(const std::string& key, const std::string& text) {
  const double v = parse_number(key, text);
  INGOT_CHECK_AS(v >= 0 && v == std::floor(v) && v < 9.0e15, InputError,
                 "optimizer state: '{}' is '{}', expected a non-negative integer", key, text);
  return static_cast<int64_t>(v);
}

bool parse_flag(const std::string& key, const std::string& text) {
  INGOT_CHECK_AS(text == "true" || text == "false", InputError, "optimizer state: '{}' is '{}', expected true or false",
                 key, text);
  return text == "true";
}

}  // namespace

std::vector<GroupSpec> single_group(const std::vector<Tensor>& params) {
  GroupSpec g;
  g.params = params;
  return {g};
}

Optimizer::Optimizer(GroupOptions defaults) : defaults_(std::move(defaults)) {
  const size_t lr = defaults_.list().find("lr");
  INGOT_CHECK(lr != OptionList::npos && !defaults_.list().specs()[lr].flag,
              "optimizer: its options ({}) have no number 'lr', which schedules set",
              defaults_.empty() ? "none" : defaults_.list().names());
}

void Optimizer::check_options(const GroupOptions&) const {}

void Optimizer::add_param_group(const GroupSpec& spec) {
  ParamGroup g;
  g.params = spec.params;
  g.options = defaults_;
  for (const auto& [name, value] : spec.options) {
    INGOT_CHECK_AS(option_list().has(name), ConfigError,
                   "{}: parameter group {} sets '{}', which is not one of its options ({})", type(), groups_.size(),
                   name, option_list().names());
    g.options.set(name, value);
  }
  add_param_group(std::move(g));
}

void Optimizer::add_param_group(ParamGroup group) {
  if (group.options.empty()) group.options = defaults_;
  INGOT_CHECK_AS(group.options.list().same_names(option_list()), ConfigError,
                 "{}: parameter group {} has the options ({}), expected this optimizer's ({})", type(), groups_.size(),
                 group.options.list().names(), option_list().names());
  group.options.check(type());
  check_options(group.options);
  std::set<const TensorImpl*> seen;
  for (const ParamGroup& g : groups_)
    for (const Tensor& p : g.params) seen.insert(&p.impl());
  for (size_t i = 0; i < group.params.size(); ++i) {
    const Tensor& p = group.params[i];
    INGOT_CHECK(p.defined(), "{}: parameter {} of group {} is undefined", type(), i, groups_.size());
    INGOT_CHECK_AS(is_floating(p.dtype()), DTypeError, "{}: parameter {} of group {} is {}, expected floating point",
                   type(), i, groups_.size(), dtype_name(p.dtype()));
    INGOT_CHECK(seen.insert(&p.impl()).second,
                "{}: parameter {} {} of group {} already belongs to a parameter group (each parameter may be in one "
                "group only)",
                type(), i, p.shape().str(), groups_.size());
  }
  if (group.initial_lr == 0.0) group.initial_lr = group.options.lr();
  state_.emplace_back(group.params.size());
  groups_.push_back(std::move(group));
}

void Optimizer::step() {
  NoGradGuard no_grad;
  update_groups();
}

void Optimizer::update_groups() {
  for (size_t g = 0; g < groups_.size(); ++g) {
    std::vector<ParamState*> states;
    std::vector<Tensor> params, grads;
    for (size_t i = 0; i < groups_[g].params.size(); ++i) {
      const Tensor& p = groups_[g].params[i];
      Tensor grad = p.grad();
      if (!grad.defined()) continue;  // no gradient reached it: torch skips it too
      INGOT_CHECK_SHAPE(grad.shape() == p.shape(), "{}: parameter {} of group {} is {} but its grad is {}", type(), i,
                        g, p.shape().str(), grad.shape().str());
      states.push_back(&state_[g][i]);
      params.push_back(p);
      grads.push_back(std::move(grad));
    }
    if (!params.empty()) update_group(groups_[g], states, params, grads);
  }
}

void Optimizer::prepare_step() {
  INGOT_CHECK(capturable(), "{}: its updates cannot be captured (prepare_step needs a capturable optimizer)", type());
  NoGradGuard no_grad;
  pending_.clear();
  hyper_used_ = 0;
  preparing_ = true;
  try {
    update_groups();
  } catch (...) {
    preparing_ = false;
    pending_.clear();
    throw;
  }
  preparing_ = false;
  // The key: which parameters have gradients, their state tensors and how their step counts differ
  // within a group (Adam batches parameters by step count), and the hyper-parameter tensors.
  uint64_t h = pending_.size();
  const auto mix = [&h](uint64_t v) { h = (h ^ v) * 0x100000001b3ull; };
  for (size_t g = 0; g < groups_.size(); ++g) {
    int64_t first_step = -1;
    for (size_t i = 0; i < groups_[g].params.size(); ++i) {
      if (!groups_[g].params[i].grad().defined()) {
        mix(1);
        continue;
      }
      const ParamState& st = state_[g][i];
      if (first_step < 0) first_step = st.step;
      mix(static_cast<uint64_t>(st.step - first_step) + 2);
      for (const auto& [name, t] : st.tensors) mix(reinterpret_cast<uintptr_t>(t.storage().get()));
    }
  }
  for (size_t k = 0; k < hyper_used_; ++k) mix(reinterpret_cast<uintptr_t>(hyper_[k].storage().get()));
  updates_key_ = static_cast<int64_t>(h);
}

void Optimizer::run_updates() {
  NoGradGuard no_grad;
  std::vector<std::function<void()>> updates = std::move(pending_);
  pending_.clear();
  for (const auto& update : updates) update();
}

void Optimizer::issue(std::function<void()> update) {
  if (preparing_) {
    pending_.push_back(std::move(update));
  } else {
    update();
  }
}

Tensor Optimizer::hyper(double lr, double step, Device device) {
  if (!preparing_) return Tensor();
  if (hyper_used_ == hyper_.size()) hyper_.push_back(Tensor());
  Tensor& h = hyper_[hyper_used_++];
  if (!h.defined() || h.device() != device) h = Tensor::empty(Shape{2}, DType::F64, device);
  h.copy_(Tensor::from_vector<double>({lr, step}, Shape{2}));
  return h;
}

void Optimizer::zero_grad() {
  for (const ParamGroup& g : groups_)
    for (const Tensor& p : g.params)
      if (p.grad().defined()) p.set_grad(Tensor());
}

void Optimizer::to(Device device) {
  NoGradGuard no_grad;
  for (auto& group : state_)
    for (ParamState& st : group)
      for (auto& [name, t] : st.tensors) t = t.to(device);
}

OptimizerState Optimizer::state_dict() const {
  OptimizerState s;
  s.scalars["type"] = type();
  s.scalars["groups"] = std::to_string(groups_.size());
  size_t index = 0;
  for (size_t g = 0; g < groups_.size(); ++g) {
    const ParamGroup& group = groups_[g];
    const std::string prefix = fmt::format("group.{}.", g);
    s.scalars[prefix + "params"] = std::to_string(group.params.size());
    s.scalars[prefix + "initial_lr"] = fmt::format("{}", group.initial_lr);
    const std::vector<OptionSpec>& specs = option_list().specs();
    for (size_t k = 0; k < specs.size(); ++k) {
      const double v = group.options.at(k);
      s.scalars[prefix + specs[k].name] = specs[k].flag ? (v != 0.0 ? "true" : "false") : fmt::format("{}", v);
    }
    for (size_t i = 0; i < group.params.size(); ++i, ++index) {
      const ParamState& st = state_[g][i];
      if (st.step > 0) s.scalars[fmt::format("state.{}.step", index)] = std::to_string(st.step);
      for (const auto& [name, t] : st.tensors) s.tensors[fmt::format("state.{}.{}", index, name)] = t;
    }
  }
  return s;
}

void Optimizer::load_state_dict(const OptimizerState& s) {
  INGOT_CHECK_AS(scalar(s, "type") == type(), InputError,
                 "optimizer state: saved by a '{}' optimizer, cannot load it into '{}' (check train.optimizer.type)",
                 scalar(s, "type"), type());
  const int64_t n_groups = parse_count("groups", scalar(s, "groups"));
  INGOT_CHECK_AS(static_cast<size_t>(n_groups) == groups_.size(), InputError,
                 "optimizer state: has {} parameter groups, this optimizer has {}", n_groups, groups_.size());
  // Everything is parsed and checked before anything changes, so a bad state leaves this intact.
  std::vector<GroupOptions> options(groups_.size(), defaults_);
  std::vector<double> initial_lr(groups_.size());
  std::vector<std::vector<ParamState>> state(groups_.size());
  std::vector<std::pair<size_t, size_t>> where;  // global index -> (group, param)
  for (size_t g = 0; g < groups_.size(); ++g) {
    const std::string prefix = fmt::format("group.{}.", g);
    const int64_t n = parse_count(prefix + "params", scalar(s, prefix + "params"));
    INGOT_CHECK_AS(static_cast<size_t>(n) == groups_[g].params.size(), InputError,
                   "optimizer state: group {} has {} parameters, this optimizer's group {} has {}", g, n, g,
                   groups_[g].params.size());
    initial_lr[g] = parse_number(prefix + "initial_lr", scalar(s, prefix + "initial_lr"));
    // Only this optimizer's options: a checkpoint may name others (before each optimizer declared
    // its own, every checkpoint held the options of all built-in ones).
    const std::vector<OptionSpec>& specs = option_list().specs();
    for (size_t k = 0; k < specs.size(); ++k) {
      const std::string key = prefix + specs[k].name;
      const std::string& text = scalar(s, key);
      options[g].set_at(k, specs[k].flag ? (parse_flag(key, text) ? 1.0 : 0.0) : parse_number(key, text));
    }
    options[g].check(type());
    check_options(options[g]);
    state[g].resize(groups_[g].params.size());
    for (size_t i = 0; i < groups_[g].params.size(); ++i) where.emplace_back(g, i);
  }
  const std::vector<std::string> names = state_names();
  auto locate = [&](const std::string& key, const std::string& rest) -> std::pair<size_t, std::string> {
    const size_t dot = rest.find('.');
    const std::string idx = rest.substr(0, dot);
    const int64_t i = parse_count(key, idx);
    INGOT_CHECK_AS(static_cast<size_t>(i) < where.size() && dot != std::string::npos, InputError,
                   "optimizer state: key '{}' does not name one of the {} parameters", key, where.size());
    return {static_cast<size_t>(i), rest.substr(dot + 1)};
  };
  for (const auto& [key, value] : s.scalars) {
    if (key.rfind("state.", 0) != 0) continue;
    const auto [i, name] = locate(key, key.substr(6));
    INGOT_CHECK_AS(name == "step", InputError, "optimizer state: unknown scalar '{}'", key);
    state[where[i].first][where[i].second].step = parse_count(key, value);
  }
  for (const auto& [key, t] : s.tensors) {
    INGOT_CHECK_AS(key.rfind("state.", 0) == 0, InputError, "optimizer state: unknown tensor '{}'", key);
    const auto [i, name] = locate(key, key.substr(6));
    INGOT_CHECK_AS(std::find(names.begin(), names.end(), name) != names.end(), InputError,
                   "optimizer state: '{}' is not state of a {} optimizer", key, type());
    const Tensor& p = groups_[where[i].first].params[where[i].second];
    INGOT_CHECK_AS(t.defined() && t.shape() == p.shape(), InputError,
                   "optimizer state: '{}' has shape {}, its parameter has {}", key,
                   t.defined() ? t.shape().str() : "none", p.shape().str());
    NoGradGuard no_grad;
    Tensor copy = Tensor::empty(p.shape(), p.dtype(), p.device());
    copy.copy_(t);
    state[where[i].first][where[i].second].tensors[name] = copy;
  }
  for (size_t g = 0; g < groups_.size(); ++g) {
    groups_[g].options = options[g];
    groups_[g].initial_lr = initial_lr[g];
  }
  state_ = std::move(state);
}

}  // namespace ingot::optim
