// CompiledStep: guard keys, the warm-up / capture / verify / replay states of each key, and the
// eager fallback.
#include "ingot/graph/compiled_step.h"

#include <fmt/format.h>

#include <algorithm>

#include "ingot/autograd/hooks.h"
#include "ingot/base/grad_mode.h"
#include "ingot/graph/capture.h"
#include "ingot/graph/conv_algorithm.h"
#include "ingot/graph/fusion.h"
#include "ingot/graph/graph_dump.h"
#include "ingot/graph/in_place.h"
#include "ingot/graph/pool_grad.h"
#include "ingot/graph/prepack.h"
#include "ingot/graph/recompute.h"
#include "ingot/runtime/logging.h"

namespace ingot::graph {

struct CompiledStep::Entry {
  enum class State { Warm, Verify, Ready, Eager } state = State::Warm;
  std::optional<Graph> pending;  ///< the first capture, until a second one agrees
  int mismatches = 0;
  std::unique_ptr<Executable> exec;
  std::string text;  ///< the key in words (for the logs)
  int64_t replays = 0;  ///< counted while a dump waits for the third
  int index = 0;  ///< its number among the graphs compiled
};

namespace {

void key_tensor(std::vector<int64_t>& k, const Tensor& t) {
  if (!t.defined()) {
    k.push_back(-1);
    return;
  }
  k.push_back(static_cast<int64_t>(t.dtype()));
  k.push_back(static_cast<int64_t>(t.device().kind) * 1024 + t.device().index);
  k.push_back(t.is_opaque() ? 1 : 0);
  k.push_back(t.offset());
  k.push_back(t.dim());
  for (int64_t d : t.shape()) k.push_back(d);
  if (!t.is_opaque())
    for (int64_t s : t.strides()) k.push_back(s);
}

std::string tensor_text(const Tensor& t) {
  return t.defined() ? fmt::format("{}{}", dtype_name(t.dtype()), t.shape().str()) : "none";
}

}  // namespace

CompiledStep::CompiledStep(CompileOptions options, std::vector<Tensor> params, std::vector<Tensor> guarded)
    : options_(std::move(options)), params_(std::move(params)), guarded_(std::move(guarded)) {}

CompiledStep::~CompiledStep() = default;

void CompiledStep::disable(const std::string& why) {
  if (!disabled_.empty()) return;
  disabled_ = why;
  if (stats_.fallback.empty()) stats_.fallback = why;
  log_warn("compile: {}; running eager", why);
}

void CompiledStep::fall_back(Entry& e, const std::string& why) {
  e.state = Entry::State::Eager;
  e.pending.reset();
  if (stats_.fallback.empty()) stats_.fallback = why;
  log_warn("compile: the {}step for {} runs eager: {}", label_.empty() ? "" : label_ + " ", e.text, why);
}

std::unique_ptr<Executable> CompiledStep::compile(Graph graph, const std::string& key_text) {
  const bool dump = !options_.dump_dir.empty();
  const std::string prefix = fmt::format("graph{}", stats_.graphs);
  const size_t captured_nodes = graph.nodes.size();
  if (dump) write_graph(options_.dump_dir, prefix + "-0-captured", graph);
  int removed = 0, folded = 0, fused = 0, pool_grads = 0, winograd = 0, recomputed = 0, prepacked = 0, in_place = 0;
  if (options_.dead_code) {
    removed = eliminate_dead_code(graph);
    if (dump) write_graph(options_.dump_dir, prefix + "-1-dead_code", graph);
  }
  if (options_.fold) {
    folded = fold_constants(graph);
    if (dump) write_graph(options_.dump_dir, prefix + "-2-fold_constants", graph);
  }
  if (options_.fuse) {
    fused = fuse_elementwise(graph);
    if (dump) write_graph(options_.dump_dir, prefix + "-3-fuse", graph);
  }
  // attributes and added nodes: seen in the next dump
  if (options_.pool_grads) pool_grads = move_relu_grads_before_pools(graph);
  if (options_.winograd) winograd = choose_conv_algorithms(graph);
  if (options_.recompute) recomputed = recompute_activations(graph);
  if (options_.freeze_weights) prepacked = prepack_weights(graph);
  if (options_.in_place && options_.plan_memory) in_place = share_in_place(graph);
  const MemoryPlan plan = plan_memory(graph, options_.plan_memory);
  if (dump) write_graph(options_.dump_dir, prefix + "-4-plan_memory", graph);
  ++stats_.graphs;
  stats_.planned_bytes = plan.arena_bytes;
  stats_.fused = fused;
  stats_.winograd = winograd;
  stats_.recomputed = recomputed;
  stats_.prepacked = prepacked;
  stats_.in_place = in_place;
  std::string line = fmt::format(
      "compile: {}graph {} for {}: {} nodes captured, {} dead, {} folded, {} pairs fused{}{}{}, {} values "
      "recomputed for backward, {} written in place; intermediate values {} planned in one arena (no reuse: {}, the "
      "most alive at once: {}), {} left to the caller each step",
      label_.empty() ? "" : label_ + " ", stats_.graphs, key_text, captured_nodes, removed, folded, fused,
      pool_grads > 0 ? fmt::format(", {} relu gradients taken before max pooling's", pool_grads) : "",
      options_.winograd ? fmt::format(", {} convolutions on Winograd kernels", winograd) : "",
      options_.freeze_weights ? fmt::format(", {} weights packed", prepacked) : "", recomputed, in_place,
      format_bytes(plan.arena_bytes), format_bytes(plan.unplanned_bytes), format_bytes(plan.peak_live_bytes),
      format_bytes(plan.escaping_bytes));
  // A graph without intermediate values (the optimizer's updates write the caller's tensors) gets
  // the short line.
  if (plan.unplanned_bytes == 0 && plan.escaping_bytes == 0 && fused == 0 && recomputed == 0)
    line = fmt::format("compile: {}graph {} for {}: {} nodes captured, {} dead, {} folded; no intermediate values",
                       label_.empty() ? "" : label_ + " ", stats_.graphs, key_text, captured_nodes, removed, folded);
  if (message_) {
    message_(line);
  } else {
    log_info("{}", line);
  }
  return std::make_unique<Executable>(std::move(graph));
}

std::vector<Tensor> CompiledStep::run(const std::vector<Tensor>& inputs, const std::vector<GuardValue>& host,
                                      const Body& body) {
  if (!disabled_.empty()) {
    ++stats_.eager;
    return body();
  }
  key_.clear();  // (kept between calls: no allocation in the steady state)
  std::vector<int64_t>& key = key_;
  for (const GuardValue& h : host) key.push_back(h.value);
  key.push_back(GradMode::is_enabled() ? 1 : 0);
  for (const Tensor& t : inputs) key_tensor(key, t);
  int with_grad = 0;
  for (const Tensor& p : params_) {
    key.push_back(reinterpret_cast<int64_t>(p.storage().get()));
    const Tensor g = p.grad();
    key_tensor(key, g);
    with_grad += g.defined() ? 1 : 0;
  }
  for (const Tensor& t : guarded_) key.push_back(reinterpret_cast<int64_t>(t.storage().get()));
  // The key in words, for the logs of a new key only.
  const auto key_text = [&] {
    std::string text;
    for (const GuardValue& h : host)
      if (h.name[0] != '\0') text += fmt::format("{}{} {}", text.empty() ? "" : ", ", h.name, h.value);
    for (const Tensor& t : inputs) text += fmt::format("{}{}", text.empty() ? "" : ", ", tensor_text(t));
    if (with_grad > 0) text += fmt::format("{}{} gradients present", text.empty() ? "" : ", ", with_grad);
    return text;
  };

  // Gradients that exist before the step (a later micro-batch of an accumulation group) are
  // inputs too: the step adds to them.
  std::vector<Tensor> bound = inputs;
  if (with_grad > 0)
    for (const Tensor& p : params_)
      if (p.grad().defined()) bound.push_back(p.grad());

  auto [it, is_new] = entries_.try_emplace(key, nullptr);
  if (is_new) {
    it->second = std::make_unique<Entry>();
    const std::string text = key_text();
    it->second->text = text;
    const int live = static_cast<int>(std::count_if(entries_.begin(), entries_.end(), [](const auto& kv) {
      return kv.second->state != Entry::State::Eager;
    }));
    if (live > options_.max_graphs) {
      it->second->state = Entry::State::Eager;
      if (!warned_limit_) {
        warned_limit_ = true;
        if (stats_.fallback.empty()) stats_.fallback = "graph limit reached";
        log_warn("compile: {} graphs already (the limit): steps for {} and any further shapes run eager (raise "
                 "train.compile.max_graphs; token batches of many lengths: set data.pad_to_multiple_of)",
                 options_.max_graphs, text);
      }
    } else if (entries_.size() > 1) {
      log_info("compile: a new guard key ({}): compiling another {}graph", text, label_.empty() ? "" : label_ + " ");
    }
  }
  Entry& e = *it->second;
  switch (e.state) {
    case Entry::State::Eager:
      ++stats_.eager;
      return body();
    case Entry::State::Warm: {
      // The first step of a key runs eager: lazily made state (optimizer moments, caches) exists
      // before a capture sees the step.
      e.state = Entry::State::Verify;
      ++stats_.eager;
      return body();
    }
    case Entry::State::Verify: {
      Captured c = capture(body, bound, params_);
      ++stats_.captured;
      if (!c.graph) {
        fall_back(e, c.failure);
        return std::move(c.results);
      }
      if (!e.pending) {
        e.pending = std::move(c.graph);
        return std::move(c.results);
      }
      std::string why;
      if (!same_graph(*e.pending, *c.graph, &why)) {
        if (!options_.dump_dir.empty()) {  // the two captures that disagree, to compare
          write_graph(options_.dump_dir, fmt::format("mismatch{}-a", e.mismatches), *e.pending);
          write_graph(options_.dump_dir, fmt::format("mismatch{}-b", e.mismatches), *c.graph);
        }
        if (++e.mismatches >= 2) {
          fall_back(e, "the step differs from one step to the next (" + why + ")");
        } else {
          e.pending = std::move(c.graph);
        }
        return std::move(c.results);
      }
      e.pending.reset();
      e.index = stats_.graphs;
      e.exec = compile(*std::move(c.graph), e.text);
      e.state = Entry::State::Ready;
      return std::move(c.results);
    }
    case Entry::State::Ready:
      break;
  }
  ++stats_.replayed;
  // The times of the third replay: the first ones touch the arena's pages for the first time.
  if (!options_.dump_dir.empty() && e.replays < 3 && ++e.replays == 3) {
    std::vector<double> seconds;
    std::vector<Tensor> out = e.exec->run(bound, params_, &seconds);
    write_graph(options_.dump_dir, fmt::format("graph{}-5-replay", e.index), e.exec->graph(), seconds);
    run_gradient_hooks(e.exec->graph());
    return out;
  }
  std::vector<Tensor> out = e.exec->run(bound, params_);
  run_gradient_hooks(e.exec->graph());
  return out;
}

void CompiledStep::run_gradient_hooks(const Graph& g) const {
  // The parameters whose gradient the step made or added to (not one it only passed on), last
  // first: backward produces the last layers' gradients first.
  for (auto it = g.grads.rbegin(); it != g.grads.rend(); ++it) {
    const Value& v = g.values[it->second.value];
    if (v.kind == ValueKind::Internal || v.written) autograd::run_post_accumulate_grad_hooks(params_[it->first]);
  }
}

}  // namespace ingot::graph
