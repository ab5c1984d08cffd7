// Gradient checkpointing: the segment's frame, the thread's stack of segments that record_op
// consults, the generator observer that notes each segment's first draws, and the
// recomputation that replays a segment under the random, autocast and grad state of its forward.
#include "ingot/autograd/checkpoint.h"

#include <algorithm>
#include <utility>

#include "checkpoint_frame.h"
#include "ingot/base/grad_mode.h"
#include "record.h"

namespace ingot::autograd {

namespace {

/// Innermost last. A recomputation starts a stack of its own: it belongs to no outer segment.
thread_local std::vector<SavedTensorsScope> t_scopes;
thread_local int t_recompute_depth = 0;

/// Generators a recomputation set or drew from, with the states to put back when it ends.
class RngReplay {
 public:
  explicit RngReplay(const std::vector<std::pair<Generator*, Generator::State>>& at_forward) {
    for (const auto& [gen, state] : at_forward) {
      restore_.emplace_back(gen, gen->state());
      gen->set_state(state);
    }
  }
  ~RngReplay() {
    for (auto it = restore_.rbegin(); it != restore_.rend(); ++it) it->first->set_state(it->second);
  }
  RngReplay(const RngReplay&) = delete;
  RngReplay& operator=(const RngReplay&) = delete;
  /// A generator the forward did not draw from: its draws now must not move the outer stream.
  void before_draw(Generator& gen) {
    const bool known = std::any_of(restore_.begin(), restore_.end(), [&](const auto& r) { return r.first == &gen; });
    if (!known) restore_.emplace_back(&gen, gen.state());
  }

 private:
  std::vector<std::pair<Generator*, Generator::State>> restore_;
};

thread_local RngReplay* t_replay = nullptr;
/// The observer installed before the outermost segment began (one that restores generators
/// after a measurement, say): it still hears every draw.
thread_local GeneratorObserver* t_outer_observer = nullptr;

/// Tells every segment being recorded on this thread, and the recomputation running, of a draw.
class SegmentObserver final : public GeneratorObserver {
 public:
  void before_draw(Generator& gen) override {
    for (const SavedTensorsScope& s : t_scopes)
      if (!s.recomputing) s.frame->before_draw(gen);
    if (t_replay != nullptr) t_replay->before_draw(gen);
    if (t_outer_observer != nullptr) t_outer_observer->before_draw(gen);
  }
};

SegmentObserver& observer() {
  static SegmentObserver* o = new SegmentObserver();
  return *o;
}

/// Pushes a scope (and the observer) for its lifetime.
class ScopeGuard {
 public:
  explicit ScopeGuard(SavedTensorsScope scope)
      : prev_observer_(set_generator_observer(&observer())), prev_outer_(t_outer_observer) {
    if (prev_observer_ != &observer()) t_outer_observer = prev_observer_;
    t_scopes.push_back(scope);
  }
  ~ScopeGuard() {
    t_scopes.pop_back();
    t_outer_observer = prev_outer_;
    set_generator_observer(prev_observer_);
  }
  ScopeGuard(const ScopeGuard&) = delete;
  ScopeGuard& operator=(const ScopeGuard&) = delete;

 private:
  GeneratorObserver* prev_observer_;
  GeneratorObserver* prev_outer_;
};

/// The whole thread state a recomputation replaces, put back when it ends (also by an exception).
class RecomputeGuard {
 public:
  explicit RecomputeGuard(RngReplay* replay)
      : outer_scopes_(std::exchange(t_scopes, {})), outer_replay_(std::exchange(t_replay, replay)) {
    ++t_recompute_depth;
  }
  ~RecomputeGuard() {
    --t_recompute_depth;
    t_replay = outer_replay_;
    t_scopes = std::move(outer_scopes_);
  }
  RecomputeGuard(const RecomputeGuard&) = delete;
  RecomputeGuard& operator=(const RecomputeGuard&) = delete;

 private:
  std::vector<SavedTensorsScope> outer_scopes_;
  RngReplay* outer_replay_;
};

}  // namespace

const SavedTensorsScope* saved_tensors_scope() { return t_scopes.empty() ? nullptr : &t_scopes.back(); }

bool is_recomputing() { return t_recompute_depth > 0; }

CheckpointFrame::CheckpointFrame(CheckpointFunction fn, const std::vector<Tensor>& inputs)
    : fn_(std::move(fn)), autocast_(AutocastMode::get()) {
  inputs_.reserve(inputs.size());
  for (const Tensor& t : inputs) {
    inputs_.push_back(saved_alias(t));
    input_requires_grad_.push_back(t.defined() && t.requires_grad());
  }
}

size_t CheckpointFrame::add_node(OpKind op) {
  ops_.push_back(op);
  return ops_.size() - 1;
}

void CheckpointFrame::before_draw(Generator& gen) {
  const bool seen = std::any_of(rng_.begin(), rng_.end(), [&](const auto& r) { return r.first == &gen; });
  if (!seen) rng_.emplace_back(&gen, gen.state());
}

void CheckpointFrame::capture(OpKind op, SavedTensors saved) {
  INGOT_CHECK(captured_ < ops_.size() && ops_[captured_] == op,
              "checkpoint: recomputing a segment ran {} where its forward ran {} (op {} of {} that keep tensors): a "
              "checkpointed segment must run the same ops every time (no branch on data or on state that changed "
              "since the forward pass)",
              op_info(op).name, captured_ < ops_.size() ? op_info(ops_[captured_]).name : "nothing more", captured_ + 1,
              ops_.size());
  recomputed_[captured_++] = std::move(saved);
}

void CheckpointFrame::recompute() {
  recomputed_.assign(ops_.size(), std::nullopt);
  captured_ = 0;
  {
    RngReplay replay(rng_);
    const RecomputeGuard thread_state(&replay);
    const ScopeGuard scope({this, true});
    const EnableGradGuard grad;  // the backward pass runs under no_grad
    const AutocastGuard autocast(autocast_);
    std::vector<Tensor> inputs;
    inputs.reserve(inputs_.size());
    for (size_t i = 0; i < inputs_.size(); ++i) {
      Tensor t = saved_alias(inputs_[i]);
      if (input_requires_grad_[i]) t.set_requires_grad(true);
      inputs.push_back(std::move(t));
    }
    // The recomputed outputs and their graph are dropped here; the frame holds what it captured.
    (void)fn_(inputs);
  }
  INGOT_CHECK(captured_ == ops_.size(),
              "checkpoint: recomputing a segment ran {} ops that keep tensors where its forward ran {}: a "
              "checkpointed segment must run the same ops every time",
              captured_, ops_.size());
}

SavedTensors CheckpointFrame::unpack(size_t index, OpKind op) {
  INGOT_CHECK(index < ops_.size() && ops_[index] == op, "checkpoint: node {} ({}) is not one of this segment's", index,
              op_info(op).name);
  if (recomputed_.size() != ops_.size() || !recomputed_[index]) recompute();  // first use in this backward pass
  SavedTensors s = std::move(*recomputed_[index]);
  recomputed_[index].reset();
  return s;
}

std::vector<Tensor> checkpoint(const CheckpointFunction& fn, const std::vector<Tensor>& inputs) {
  INGOT_CHECK(fn != nullptr, "checkpoint: the function is empty");
  if (!GradMode::is_enabled()) return fn(inputs);  // nothing to record: just the forward
  auto frame = std::make_shared<CheckpointFrame>(fn, inputs);
  const ScopeGuard scope({frame.get(), false});
  return fn(inputs);
}

Tensor checkpoint(const std::function<Tensor(const Tensor&)>& fn, const Tensor& input) {
  INGOT_CHECK(fn != nullptr, "checkpoint: the function is empty");
  return checkpoint([fn](const std::vector<Tensor>& in) { return std::vector<Tensor>{fn(in[0])}; }, {input}).at(0);
}

}  // namespace ingot::autograd
