// Dead-code elimination, constant folding and the static memory plan.
#include "ingot/graph/passes.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "ingot/runtime/dispatch.h"

namespace ingot::graph {

namespace {

/// Values a caller of the step sees afterwards: results, gradients and escaping values.
std::vector<char> kept_outside(const Graph& g) {
  std::vector<char> kept(g.values.size(), 0);
  for (const TensorRef& r : g.results)
    if (r.defined()) kept[r.value] = 1;
  for (const auto& [k, r] : g.grads) kept[r.value] = 1;
  for (size_t v = 0; v < g.values.size(); ++v)
    if (g.values[v].kind != ValueKind::Internal || g.values[v].escapes) kept[v] = 1;
  return kept;
}

bool is_internal(const Value& v) { return v.kind == ValueKind::Internal && v.escapes == false; }

}  // namespace

int eliminate_dead_code(Graph& g) {
  std::vector<char> needed = kept_outside(g);
  std::vector<char> live(g.nodes.size(), 0);
  for (size_t i = g.nodes.size(); i-- > 0;) {
    const Node& n = g.nodes[i];
    bool keep = false;
    for (const TensorRef& o : n.outputs) keep = keep || needed[o.value] || !is_internal(g.values[o.value]);
    if (!keep) continue;
    live[i] = 1;
    for (const TensorRef& in : n.inputs)
      if (in.defined()) needed[in.value] = 1;
    // An in-place node reads what it writes: whatever made that value before stays.
    if (n.in_place)
      for (const TensorRef& o : n.outputs) needed[o.value] = 1;
  }
  std::vector<Node> kept;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (live[i]) kept.push_back(std::move(g.nodes[i]));
  const int removed = static_cast<int>(g.nodes.size() - kept.size());
  g.nodes = std::move(kept);
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const TensorRef& o : g.nodes[i].outputs)
      if (g.values[o.value].kind == ValueKind::Internal && !g.nodes[i].in_place)
        g.values[o.value].producer = static_cast<int>(i);
  return removed;
}

int fold_constants(Graph& g) {
  int folded = 0;
  std::vector<Node> kept;
  for (Node& n : g.nodes) {
    bool foldable = !n.reorder && !n.in_place && !n.rng && n.backend != nullptr;
    for (const TensorRef& in : n.inputs)
      foldable = foldable && (!in.defined() || g.values[in.value].kind == ValueKind::Constant);
    for (const TensorRef& o : n.outputs) {
      const Value& v = g.values[o.value];
      foldable = foldable && is_internal(v) && !v.written && v.device.is_cpu();
    }
    if (!foldable) {
      kept.push_back(std::move(n));
      continue;
    }
    std::vector<ingot_tensor_desc> in, out;
    for (const TensorRef& r : n.inputs) {
      in.push_back(r.desc);
      if (r.defined()) in.back().data = g.values[r.value].storage->data();
    }
    for (const TensorRef& r : n.outputs) {
      Value& v = g.values[r.value];
      v.storage = Tensor::empty({static_cast<int64_t>(v.nbytes)}, DType::U8, v.device).storage();
      out.push_back(r.desc);
      out.back().data = v.storage->data();
    }
    run_descs_on(*n.backend, n.op, in, out, n.attrs.empty() ? nullptr : n.attrs.data());
    for (const TensorRef& r : n.outputs) {
      g.values[r.value].kind = ValueKind::Constant;
      g.values[r.value].producer = -1;
    }
    ++folded;
  }
  g.nodes = std::move(kept);
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const TensorRef& o : g.nodes[i].outputs)
      if (g.values[o.value].kind == ValueKind::Internal && !g.nodes[i].in_place)
        g.values[o.value].producer = static_cast<int>(i);
  return folded;
}

MemoryPlan plan_memory(Graph& g, bool reuse) {
  constexpr size_t kAlign = 64;
  auto aligned = [](size_t n) { return (n + kAlign - 1) / kAlign * kAlign; };
  MemoryPlan plan;
  const int none = -1;
  std::vector<int> first(g.values.size(), none), last(g.values.size(), none);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    auto touch = [&](const TensorRef& r) {
      if (!r.defined()) return;
      if (first[r.value] == none) first[r.value] = static_cast<int>(i);
      last[r.value] = static_cast<int>(i);
    };
    for (const TensorRef& r : n.inputs) touch(r);
    for (const TensorRef& r : n.outputs) touch(r);
  }
  std::vector<int> planned;
  for (size_t v = 0; v < g.values.size(); ++v) {
    Value& val = g.values[v];
    val.arena_offset = -1;
    if (val.kind == ValueKind::Internal && val.escapes) plan.escaping_bytes += val.nbytes;
    if (val.kind == ValueKind::State || val.kind == ValueKind::Constant) plan.state_bytes += val.nbytes;
    if (is_internal(val) && first[v] != none) planned.push_back(static_cast<int>(v));
  }
  for (int v : planned) plan.unplanned_bytes += aligned(g.values[v].nbytes);
  // The most bytes alive at once: a sweep over the nodes.
  std::vector<int64_t> delta(g.nodes.size() + 1, 0);
  for (int v : planned) {
    delta[first[v]] += static_cast<int64_t>(aligned(g.values[v].nbytes));
    delta[last[v] + 1] -= static_cast<int64_t>(aligned(g.values[v].nbytes));
  }
  int64_t live = 0;
  for (int64_t d : delta) plan.peak_live_bytes = std::max(plan.peak_live_bytes, static_cast<size_t>(live += d));

  if (!reuse) {
    size_t at = 0;
    for (int v : planned) {
      g.values[v].arena_offset = static_cast<int64_t>(at);
      at += aligned(g.values[v].nbytes);
    }
    plan.arena_bytes = at;
    return plan;
  }
  // Largest first, each at the lowest offset clear of every placed value whose life overlaps.
  std::sort(planned.begin(), planned.end(), [&](int a, int b) {
    if (g.values[a].nbytes != g.values[b].nbytes) return g.values[a].nbytes > g.values[b].nbytes;
    return a < b;
  });
  struct Placed {
    int first, last;
    size_t begin, end;
  };
  std::vector<Placed> placed;
  for (int v : planned) {
    const size_t size = aligned(g.values[v].nbytes);
    std::vector<std::pair<size_t, size_t>> busy;
    for (const Placed& p : placed)
      if (p.first <= last[v] && first[v] <= p.last) busy.emplace_back(p.begin, p.end);
    std::sort(busy.begin(), busy.end());
    size_t at = 0;
    for (const auto& [b, e] : busy) {
      if (at + size <= b) break;
      at = std::max(at, e);
    }
    g.values[v].arena_offset = static_cast<int64_t>(at);
    placed.push_back({first[v], last[v], at, at + size});
    plan.arena_bytes = std::max(plan.arena_bytes, at + size);
  }
  return plan;
}

std::string format_bytes(size_t bytes) {
  if (bytes >= (size_t{1} << 20)) return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20));
  if (bytes >= 1024) return fmt::format("{:.1f} KiB", static_cast<double>(bytes) / 1024);
  return fmt::format("{} B", bytes);
}

}  // namespace ingot::graph
