// Module: the base of every layer (torch.nn.Module): ordered parameters, buffers and child
// modules, train/eval mode, state_dict / load_state_dict under torch's names, a printable summary.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ingot/tensor/tensor.h"

namespace ingot::nn {

/// Tensors by name, in registration order (torch's state_dict order).
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;
/// A state dict: parameters and buffers by dotted name ("layer1.0.bn1.running_mean").
using StateDict = NamedTensors;

class Module;
using ModulePtr = std::shared_ptr<Module>;

/// Runs before forward with the input; a returned tensor replaces the input (torch's
/// register_forward_pre_hook).
using ForwardPreHook = std::function<std::optional<Tensor>(Module& module, const Tensor& input)>;
/// Runs after forward; a returned tensor replaces the output (torch's register_forward_hook).
using ForwardHook = std::function<std::optional<Tensor>(Module& module, const Tensor& input, const Tensor& output)>;

/// Base of every layer. Subclasses register their tensors and children in the constructor and
/// override forward(); layers whose output shape depends on the input override output_shape().
class Module {
 public:
  explicit Module(std::string type_name) : type_name_(std::move(type_name)) {}
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  /// The layer's computation; the base throws (a container without a forward).
  virtual Tensor forward(const Tensor& x);
  /// forward with the hooks around it (torch's __call__). Containers call their children this
  /// way, so a hook on any layer sees it run.
  Tensor operator()(const Tensor& x);

  // ---- hooks (ids are unique in the process; removing an unknown id is a no-op) ----
  uint64_t register_forward_pre_hook(ForwardPreHook hook);
  uint64_t register_forward_hook(ForwardHook hook);
  void remove_hook(uint64_t id);
  /// Whether any hook is registered here (fusion leaves such a layer to run on its own).
  bool has_hooks() const { return !pre_hooks_.empty() || !post_hooks_.empty(); }

  // ---- gradient checkpointing (ingot/nn/checkpoint.h) ----
  /// On: operator() runs forward as one checkpointed segment when a graph is recorded (its
  /// activations are recomputed in the backward pass instead of kept; hooks run once, outside
  /// it). Parameters, names and state_dict do not change. YAML: `checkpoint: true` on a layer.
  void set_checkpoint(bool on = true) { checkpoint_ = on; }
  bool is_checkpointed() const { return checkpoint_; }
  /// A repeated building block of a network (a residual block, a transformer block): per-block
  /// checkpointing (nn/checkpoint_plan.h) makes each such module a segment of its own.
  virtual bool is_block() const { return false; }
  /// Whether the layer must run through its own operator() (hooks or checkpointing), so that
  /// fusion leaves it alone.
  bool runs_alone() const { return has_hooks() || checkpoint_; }

  /// Output shape for an input of shape `input` (batch dim included), without computing; throws
  /// ShapeError naming the layer when the input does not fit. The base returns `input`.
  virtual Shape output_shape(const Shape& input) const;
  /// "Linear", "Conv2d", ... (torch's class name).
  const std::string& type_name() const { return type_name_; }
  /// The part inside the parentheses of repr(): "in_features=784, out_features=512, bias=True".
  virtual std::string extra_repr() const { return ""; }

  // ---- registration (names must be unique within a module and contain no '.') ----
  /// Adds a parameter: a leaf tensor that requires grad. Returns it.
  Tensor register_parameter(const std::string& name, Tensor value);
  /// Adds a buffer (saved in state_dict, not trained: BatchNorm's running statistics).
  Tensor register_buffer(const std::string& name, Tensor value);
  /// Adds a child module; its tensors appear under "name.".
  template <class M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> module) {
    add_child(name, module);
    return module;
  }

  // ---- traversal (torch's order: own tensors first, then each child's, depth first) ----
  NamedTensors named_parameters(bool recurse = true, const std::string& prefix = "") const;
  std::vector<Tensor> parameters(bool recurse = true) const;
  NamedTensors named_buffers(bool recurse = true, const std::string& prefix = "") const;
  std::vector<Tensor> buffers(bool recurse = true) const;
  const std::vector<std::pair<std::string, ModulePtr>>& named_children() const { return children_; }
  std::vector<ModulePtr> children() const;
  /// This module (named `prefix`) and every descendant, depth first, as non-owning pointers.
  std::vector<std::pair<std::string, Module*>> named_modules(const std::string& prefix = "");
  /// The child at dotted path `path` ("layer1.0.conv1"); null when there is none.
  ModulePtr get_submodule(const std::string& path) const;
  /// Replaces the child at dotted path `path` by `module` (same name and position, so state_dict
  /// names keep their order): how quantization swaps a Linear for its int8 version and pruning a
  /// layer for a smaller one. Throws when there is no such child.
  void replace_child(const std::string& path, ModulePtr module);
  /// Total element count of the parameters.
  int64_t num_parameters() const;

  // ---- mode ----
  /// Sets training mode here and in every descendant (Dropout, BatchNorm read it).
  void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }
  /// Clears the gradient of every parameter (optimizer.zero_grad(set_to_none=True)).
  void zero_grad();
  /// torch's model.to(dtype): every floating parameter and buffer becomes `dtype` in place (the
  /// same tensor handles, gradients dropped); integer buffers (num_batches_tracked) stay.
  void to(DType dtype);
  /// torch's model.to(device): every parameter and buffer (and gradient) moves to `device` in
  /// place (the same tensor handles, so an optimizer built before keeps working).
  void to(Device device);
  /// The device of the first parameter or buffer (cpu for a module without tensors).
  Device device() const;

  // ---- state ----
  /// Parameters then buffers per module, depth first, under torch's dotted names. The tensors
  /// are this module's own (not copies): detach().clone() them to keep a snapshot.
  StateDict state_dict() const;
  /// Copies the values of `state` into the parameters and buffers, by name. strict: every name
  /// must be present and no other may appear; shapes must always match; dtypes are converted.
  /// Throws ShapeError listing the missing, unexpected and mismatched names.
  void load_state_dict(const std::map<std::string, Tensor>& state, bool strict = true);
  void load_state_dict(const StateDict& state, bool strict = true);

  /// torch-style nested repr: "Sequential(\n  (0): Linear(in_features=..., ...)\n ...)".
  std::string repr() const;
  /// One line per module that holds parameters or has no children (name, type, parameter
  /// count, what it is), then the total.
  std::string summary();

 protected:
  /// The tensor registered under `name` (parameters first, then buffers); undefined if none.
  Tensor tensor(const std::string& name) const;

 private:
  void add_child(const std::string& name, ModulePtr module);
  void check_new_name(const std::string& name) const;
  void repr_into(std::string& out, int indent) const;

  /// forward, as a checkpointed segment when set_checkpoint is on.
  Tensor run_forward(const Tensor& x);

  std::string type_name_;
  bool training_ = true;
  bool checkpoint_ = false;
  NamedTensors params_;
  NamedTensors buffers_;
  std::vector<std::pair<std::string, ModulePtr>> children_;
  std::vector<std::pair<uint64_t, ForwardPreHook>> pre_hooks_;
  std::vector<std::pair<uint64_t, ForwardHook>> post_hooks_;
};

/// "True" / "False", as torch prints booleans in repr.
inline const char* py_bool(bool b) { return b ? "True" : "False"; }

}  // namespace ingot::nn
