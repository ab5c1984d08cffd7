// CompiledStep (train.compile): runs a step eagerly the first time its guards are seen, captures
// it the next two times (the two captures must agree: a step whose host code feeds it values that
// change would otherwise replay stale ones), then replays the optimized graph. Guards: the inputs'
// shapes, strides, dtypes and devices, which parameters have gradients (and theirs), the
// parameters' and guarded state's storage (a replaced tensor is a new version), grad mode and the
// caller's host values (train vs eval, accumulation group size). A new guard key compiles
// another graph, up to `max_graphs`; past that, and for any step that cannot be captured, the
// step runs eagerly and the reason is logged once.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ingot/graph/executable.h"
#include "ingot/graph/passes.h"

namespace ingot::graph {

struct CompileOptions {
  bool dead_code = true;        ///< eliminate_dead_code
  bool fold = true;             ///< fold_constants
  bool fuse = true;             ///< fuse_elementwise
  bool pool_grads = true;       ///< move_relu_grads_before_pools
  /// recompute_activations (after fuse: it recomputes fused nodes): less memory, a few % slower
  bool recompute = false;
  /// choose_conv_algorithms: Winograd where it measures faster (not eager's bits: off by default)
  bool winograd = false;
  /// prepack_weights: the parameters are read once, at compile time, into the kernels' packed
  /// layouts. Only where they do not change while the graph replays (prediction, inference
  /// benchmarks); never for training or its evaluation.
  bool freeze_weights = false;
  bool plan_memory = true;      ///< plan_memory with reuse (off: each value its own block)
  /// share_in_place before plan_memory (with reuse): outputs written over inputs they replace
  bool in_place = true;
  int max_graphs = 8;           ///< distinct guard keys compiled before running eager
  std::filesystem::path dump_dir;  ///< --dump-graph: the graph before and after each pass
};

/// A host value the step depends on, part of its guard key ("" as its name: left out of the key's
/// text in the logs, e.g. a hash).
struct GuardValue {
  const char* name;
  int64_t value;
};

struct CompileStats {
  int64_t eager = 0, captured = 0, replayed = 0;
  int graphs = 0;
  size_t planned_bytes = 0;  ///< the latest graph's arena
  int fused = 0;             ///< pairs the fusion pass fused in the latest graph
  int winograd = 0;          ///< convolutions of the latest graph given Winograd kernels
  int recomputed = 0;        ///< values of the latest graph made again for the backward pass
  int prepacked = 0;         ///< weights of the latest graph packed at compile time
  int in_place = 0;          ///< outputs of the latest graph written over an input's block
  std::string fallback;      ///< why a step ran eager (the first reason), "" when none did
};

class CompiledStep {
 public:
  using Body = std::function<std::vector<Tensor>()>;
  /// `params`: whose gradients the step makes; `guarded`: further tensors whose storage must not
  /// change between steps (buffers).
  CompiledStep(CompileOptions options, std::vector<Tensor> params, std::vector<Tensor> guarded = {});
  ~CompiledStep();
  CompiledStep(const CompiledStep&) = delete;
  CompiledStep& operator=(const CompiledStep&) = delete;

  /// Runs `body` — eager, captured or replayed — on `inputs` (the tensors it reads that change
  /// from step to step) and returns its results.
  std::vector<Tensor> run(const std::vector<Tensor>& inputs, const std::vector<GuardValue>& host, const Body& body);

  /// Where the line each compiled graph gets goes (default: the info log).
  void on_message(std::function<void(const std::string&)> message) { message_ = std::move(message); }
  /// What the logs call this step's graphs ("optimizer": "compile: optimizer graph 1 for ...").
  void set_label(std::string label) { label_ = std::move(label); }
  /// Stops compiling: every later step runs eager (`why` is logged once).
  void disable(const std::string& why);
  const CompileStats& stats() const { return stats_; }

 private:
  struct Entry;
  std::unique_ptr<Executable> compile(Graph graph, const std::string& key_text);
  void fall_back(Entry& e, const std::string& why);
  /// A replay runs no autograd: after the graph it calls the hooks of every parameter whose
  /// gradient the graph made or added to, last parameter first (backward's order), as backward
  /// would have (data parallelism's reducer then reduces after the graph instead of during
  /// backward). A step that only reads gradients (the optimizer's) calls none.
  void run_gradient_hooks(const Graph& graph) const;

  CompileOptions options_;
  std::vector<Tensor> params_, guarded_;
  std::map<std::vector<int64_t>, std::unique_ptr<Entry>> entries_;
  std::vector<int64_t> key_;  ///< the guard key being built
  CompileStats stats_;
  std::string disabled_;
  bool warned_limit_ = false;
  std::function<void(const std::string&)> message_;
  std::string label_;
};

}  // namespace ingot::graph
