// Post-accumulate-grad hooks, kept in the leaf's autograd metadata.
#include "ingot/autograd/hooks.h"

#include <atomic>

#include "ingot/runtime/op_recorder.h"
#include "record.h"

namespace ingot::autograd {

uint64_t register_post_accumulate_grad_hook(const Tensor& leaf, PostAccumulateGradHook hook) {
  INGOT_CHECK(leaf.defined() && leaf.requires_grad() && leaf.is_leaf(),
              "register_post_accumulate_grad_hook: the tensor must be a leaf that requires grad (a parameter)");
  INGOT_CHECK(hook != nullptr, "register_post_accumulate_grad_hook: the hook is empty");
  static std::atomic<uint64_t> next{0};
  const uint64_t id = ++next;
  meta_of(leaf).post_accumulate_hooks.emplace_back(id, std::move(hook));
  return id;
}

void remove_post_accumulate_grad_hook(const Tensor& leaf, uint64_t id) {
  if (!leaf.defined() || leaf.impl().autograd == nullptr) return;
  std::erase_if(leaf.impl().autograd->post_accumulate_hooks, [id](const auto& h) { return h.first == id; });
}

bool has_post_accumulate_grad_hooks(const Tensor& leaf) {
  return leaf.defined() && leaf.impl().autograd != nullptr && !leaf.impl().autograd->post_accumulate_hooks.empty();
}

void run_post_accumulate_grad_hooks(const Tensor& leaf) {
  if (!has_post_accumulate_grad_hooks(leaf)) return;
  struct Paused {  // the recorder of this thread, put back however the hooks end
    OpRecorder* previous = set_op_recorder(nullptr);
    ~Paused() { set_op_recorder(previous); }
  } paused;
  // (a copy of the list: a hook may remove itself)
  for (const auto& [id, hook] : std::vector(leaf.impl().autograd->post_accumulate_hooks)) hook(leaf);
}

}  // namespace ingot::autograd
