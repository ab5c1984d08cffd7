// Module bookkeeping: registration, depth-first traversal with dotted names (torch's order),
// train/eval, state_dict loading with one message listing every problem, repr and summary.
#include "ingot/nn/module.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <set>

#include "ingot/base/grad_mode.h"
#include "ingot/nn/checkpoint.h"

namespace ingot::nn {

namespace {

std::string join_name(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "." + name;
}

std::string with_commas(int64_t n) {
  std::string s = std::to_string(n);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<size_t>(i), ",");
  return s;
}

}  // namespace

Tensor Module::forward(const Tensor& /*x*/) {
  throw Error(fmt::format("{}: this module has no forward(); call its children instead", type_name_));
}

Shape Module::output_shape(const Shape& input) const { return input; }

void Module::check_new_name(const std::string& name) const {
  INGOT_CHECK(!name.empty() && name.find('.') == std::string::npos,
              "{}: invalid name '{}' (must be non-empty and contain no '.')", type_name_, name);
  const auto taken = [&](const auto& list) {
    return std::any_of(list.begin(), list.end(), [&](const auto& e) { return e.first == name; });
  };
  INGOT_CHECK(!taken(params_) && !taken(buffers_) && !taken(children_), "{}: name '{}' is already registered",
              type_name_, name);
}

Tensor Module::register_parameter(const std::string& name, Tensor value) {
  check_new_name(name);
  INGOT_CHECK(value.defined(), "{}: parameter '{}' is undefined", type_name_, name);
  value.set_requires_grad(true);
  params_.emplace_back(name, value);
  return value;
}

Tensor Module::register_buffer(const std::string& name, Tensor value) {
  check_new_name(name);
  INGOT_CHECK(value.defined(), "{}: buffer '{}' is undefined", type_name_, name);
  buffers_.emplace_back(name, value);
  return value;
}

void Module::add_child(const std::string& name, ModulePtr module) {
  check_new_name(name);
  INGOT_CHECK(module != nullptr, "{}: child module '{}' is null", type_name_, name);
  children_.emplace_back(name, std::move(module));
}

namespace {
uint64_t next_hook_id() {
  static std::atomic<uint64_t> id{0};
  return ++id;
}
}  // namespace

Tensor Module::run_forward(const Tensor& x) {
  if (!checkpoint_) return forward(x);
  const auto run = [this](const Tensor& in) { return forward(in); };
  return run_checkpointed({this}, run, x);
}

Tensor Module::operator()(const Tensor& x) {
  if (!has_hooks()) return run_forward(x);
  Tensor input = x;
  for (const auto& [id, hook] : std::vector(pre_hooks_))  // a copy: a hook may remove itself
    if (std::optional<Tensor> changed = hook(*this, input)) input = *changed;
  Tensor output = run_forward(input);
  for (const auto& [id, hook] : std::vector(post_hooks_))
    if (std::optional<Tensor> changed = hook(*this, input, output)) output = *changed;
  return output;
}

uint64_t Module::register_forward_pre_hook(ForwardPreHook hook) {
  INGOT_CHECK(hook != nullptr, "{}: register_forward_pre_hook: the hook is empty", type_name_);
  pre_hooks_.emplace_back(next_hook_id(), std::move(hook));
  return pre_hooks_.back().first;
}

uint64_t Module::register_forward_hook(ForwardHook hook) {
  INGOT_CHECK(hook != nullptr, "{}: register_forward_hook: the hook is empty", type_name_);
  post_hooks_.emplace_back(next_hook_id(), std::move(hook));
  return post_hooks_.back().first;
}

void Module::remove_hook(uint64_t id) {
  std::erase_if(pre_hooks_, [id](const auto& h) { return h.first == id; });
  std::erase_if(post_hooks_, [id](const auto& h) { return h.first == id; });
}

ModulePtr Module::get_submodule(const std::string& path) const {
  const size_t dot = path.find('.');
  const std::string head = path.substr(0, dot);
  for (const auto& [n, c] : children_)
    if (n == head) return dot == std::string::npos ? c : c->get_submodule(path.substr(dot + 1));
  return nullptr;
}

void Module::replace_child(const std::string& path, ModulePtr module) {
  INGOT_CHECK(module != nullptr, "{}: replace_child('{}'): the new module is null", type_name_, path);
  const size_t dot = path.rfind('.');
  Module* parent = this;
  if (dot != std::string::npos) {
    const ModulePtr p = get_submodule(path.substr(0, dot));
    INGOT_CHECK(p != nullptr, "{}: replace_child: no module '{}'", type_name_, path.substr(0, dot));
    parent = p.get();
  }
  const std::string name = dot == std::string::npos ? path : path.substr(dot + 1);
  for (auto& [n, c] : parent->children_)
    if (n == name) {
      c = std::move(module);
      return;
    }
  std::vector<std::string> names;
  for (const auto& [n, c] : parent->children_) names.push_back(n);
  throw Error(fmt::format("{}: replace_child: no child '{}' (children: {})", type_name_, path, fmt::join(names, ", ")));
}

Tensor Module::tensor(const std::string& name) const {
  for (const auto& list : {&params_, &buffers_}) {
    for (const auto& [n, t] : *list) {
      if (n == name) return t;
    }
  }
  return Tensor();
}

NamedTensors Module::named_parameters(bool recurse, const std::string& prefix) const {
  NamedTensors out;
  for (const auto& [n, t] : params_) out.emplace_back(join_name(prefix, n), t);
  if (recurse) {
    for (const auto& [n, child] : children_) {
      for (auto& e : child->named_parameters(true, join_name(prefix, n))) out.push_back(std::move(e));
    }
  }
  return out;
}

std::vector<Tensor> Module::parameters(bool recurse) const {
  std::vector<Tensor> out;
  for (auto& [n, t] : named_parameters(recurse)) out.push_back(t);
  return out;
}

NamedTensors Module::named_buffers(bool recurse, const std::string& prefix) const {
  NamedTensors out;
  for (const auto& [n, t] : buffers_) out.emplace_back(join_name(prefix, n), t);
  if (recurse) {
    for (const auto& [n, child] : children_) {
      for (auto& e : child->named_buffers(true, join_name(prefix, n))) out.push_back(std::move(e));
    }
  }
  return out;
}

std::vector<Tensor> Module::buffers(bool recurse) const {
  std::vector<Tensor> out;
  for (auto& [n, t] : named_buffers(recurse)) out.push_back(t);
  return out;
}

std::vector<ModulePtr> Module::children() const {
  std::vector<ModulePtr> out;
  for (const auto& [n, c] : children_) out.push_back(c);
  return out;
}

std::vector<std::pair<std::string, Module*>> Module::named_modules(const std::string& prefix) {
  std::vector<std::pair<std::string, Module*>> out{{prefix, this}};
  for (const auto& [n, child] : children_) {
    for (auto& e : child->named_modules(join_name(prefix, n))) out.push_back(std::move(e));
  }
  return out;
}

int64_t Module::num_parameters() const {
  int64_t n = 0;
  for (const Tensor& t : parameters()) n += t.numel();
  return n;
}

void Module::train(bool on) {
  training_ = on;
  for (auto& [n, child] : children_) child->train(on);
}

void Module::zero_grad() {
  for (const Tensor& t : parameters()) t.set_grad(Tensor());
}

namespace {

/// Gives the module's own tensor handle `t` the data of `data` (contiguous, strided), keeping its
/// identity, so optimizers and callers holding the handle see the change.
void replace_data(const Tensor& t, const Tensor& data) {
  TensorImpl& im = t.impl();
  im.storage = data.storage();
  im.dtype = data.dtype();
  im.strides = data.strides();
  im.offset = data.offset();
  im.layout.reset();
}

}  // namespace

void Module::to(DType dtype) {
  INGOT_CHECK(is_floating(dtype), "Module::to: {} is not a floating dtype", dtype_name(dtype));
  NoGradGuard no_grad;
  for (const auto& [name, t] : state_dict()) {
    if (!is_floating(t.dtype()) || t.dtype() == dtype) continue;
    replace_data(t, t.strided().to(dtype).contiguous());
    if (t.grad().defined()) t.set_grad(Tensor());
  }
}

void Module::to(Device device) {
  NoGradGuard no_grad;
  for (const auto& [name, t] : state_dict()) {
    if (t.device() == device) continue;
    replace_data(t, t.detach().strided().to(device));
    if (const Tensor g = t.grad(); g.defined()) t.set_grad(g.strided().to(device));
  }
}

Device Module::device() const {
  const StateDict own = state_dict();
  return own.empty() ? Device::cpu() : own.front().second.device();
}

StateDict Module::state_dict() const {
  // torch's order: per module its parameters, then its buffers, then each child's entries.
  StateDict out;
  const std::function<void(const Module&, const std::string&)> walk = [&](const Module& m, const std::string& p) {
    for (const auto& [n, t] : m.params_) out.emplace_back(join_name(p, n), t);
    for (const auto& [n, t] : m.buffers_) out.emplace_back(join_name(p, n), t);
    for (const auto& [n, c] : m.children_) walk(*c, join_name(p, n));
  };
  walk(*this, "");
  return out;
}

void Module::load_state_dict(const std::map<std::string, Tensor>& state, bool strict) {
  const StateDict own = state_dict();
  std::vector<std::string> missing, unexpected, mismatched;
  std::set<std::string> known;
  for (const auto& [name, t] : own) {
    known.insert(name);
    const auto it = state.find(name);
    if (it == state.end() || !it->second.defined()) {
      missing.push_back(name);
    } else if (!(it->second.shape() == t.shape())) {
      mismatched.push_back(
          fmt::format("{}: checkpoint {} vs model {}", name, it->second.shape().str(), t.shape().str()));
    }
  }
  for (const auto& [name, t] : state) {
    if (known.count(name) == 0) unexpected.push_back(name);
  }
  if (!mismatched.empty() || (strict && (!missing.empty() || !unexpected.empty()))) {
    std::string msg = fmt::format("load_state_dict into {}:", type_name_);
    if (!missing.empty()) msg += fmt::format(" missing keys [{}];", fmt::join(missing, ", "));
    if (strict && !unexpected.empty()) msg += fmt::format(" unexpected keys [{}];", fmt::join(unexpected, ", "));
    if (!mismatched.empty()) msg += fmt::format(" shape mismatch [{}];", fmt::join(mismatched, "; "));
    msg += " (names follow torch.nn's state_dict; see README 'Weights and PyTorch')";
    throw ShapeError(msg);
  }
  NoGradGuard no_grad;
  for (const auto& [name, t] : own) {
    const auto it = state.find(name);
    if (it != state.end() && it->second.defined()) t.copy_(it->second);
  }
}

void Module::load_state_dict(const StateDict& state, bool strict) {
  std::map<std::string, Tensor> m;
  for (const auto& [n, t] : state) {
    INGOT_CHECK(m.emplace(n, t).second, "load_state_dict: duplicate key '{}'", n);
  }
  load_state_dict(m, strict);
}

void Module::repr_into(std::string& out, int indent) const {
  out += type_name_ + "(" + extra_repr();
  if (!children_.empty()) {
    out += "\n";
    for (const auto& [n, c] : children_) {
      out += std::string(static_cast<size_t>(indent + 2), ' ') + "(" + n + "): ";
      c->repr_into(out, indent + 2);
      out += "\n";
    }
    out += std::string(static_cast<size_t>(indent), ' ');
  }
  out += ")";
}

std::string Module::repr() const {
  std::string out;
  repr_into(out, 0);
  return out;
}

std::string Module::summary() {
  struct Row {
    std::string name, type, params, what;
  };
  std::vector<Row> rows{{"name", "type", "params", ""}};
  for (const auto& [name, m] : named_modules()) {
    if (!m->children_.empty() && m->params_.empty()) continue;
    int64_t own = 0;
    for (const auto& [n, t] : m->params_) own += t.numel();
    rows.push_back({name.empty() ? "(root)" : name, m->type_name_, with_commas(own), m->extra_repr()});
  }
  size_t w0 = 0, w1 = 0, w2 = 0;
  for (const Row& r : rows) {
    w0 = std::max(w0, r.name.size());
    w1 = std::max(w1, r.type.size());
    w2 = std::max(w2, r.params.size());
  }
  std::string out;
  for (const Row& r : rows) {
    out += fmt::format("{:<{}}  {:<{}}  {:>{}}  {}", r.name, w0, r.type, w1, r.params, w2, r.what);
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += "\n";
  }
  out += fmt::format("total: {} parameters", with_commas(num_parameters()));
  return out;
}

}  // namespace ingot::nn
