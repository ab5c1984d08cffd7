// Dead-code elimination, constant folding and the static memory plan.
#include "ingot/graph/passes.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "ingot/graph/pass_util.h"
#include "ingot/runtime/dispatch.h"

namespace ingot::graph {

namespace {

bool is_internal(const Value& v) { return v.kind == ValueKind::Internal && v.escapes == false; }

constexpr size_t kAlign = 64;
size_t aligned(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

/// Largest first, each at the lowest offset clear of every placed value whose life overlaps:
/// the tightest packing of the two plans.
std::vector<int64_t> plan_largest_first(const Graph& g, const std::vector<int>& planned, const std::vector<int>& first,
                                        const std::vector<int>& last) {
  std::vector<size_t> order(planned.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const size_t na = g.values[planned[a]].nbytes, nb = g.values[planned[b]].nbytes;
    return na != nb ? na > nb : planned[a] < planned[b];
  });
  struct Placed {
    int first, last;
    size_t begin, end;
  };
  std::vector<Placed> placed;
  std::vector<int64_t> at(planned.size(), 0);
  for (size_t i : order) {
    const int v = planned[i];
    const size_t size = aligned(g.values[v].nbytes);
    std::vector<std::pair<size_t, size_t>> busy;
    for (const Placed& p : placed)
      if (p.first <= last[v] && first[v] <= p.last) busy.emplace_back(p.begin, p.end);
    std::sort(busy.begin(), busy.end());
    size_t off = 0;
    for (const auto& [b, e] : busy) {
      if (off + size <= b) break;
      off = std::max(off, e);
    }
    at[i] = static_cast<int64_t>(off);
    placed.push_back({first[v], last[v], off, off + size});
  }
  return at;
}

/// In node order, as a caching allocator would serve the step: each value takes the smallest
/// free block it fits (the most recently freed among equals: still in cache), else a new block at
/// the arena's end; a value's block is free after its last node.
std::vector<int64_t> plan_in_order(const Graph& g, const std::vector<int>& planned, const std::vector<int>& first,
                                   const std::vector<int>& last) {
  struct Block {
    size_t begin, size;
    int64_t freed_at;
  };
  std::vector<Block> free_blocks;
  size_t end = 0;
  std::vector<int64_t> at(planned.size(), 0);
  std::vector<std::vector<size_t>> starting(g.nodes.size()), ending(g.nodes.size());
  for (size_t i = 0; i < planned.size(); ++i) {
    starting[first[planned[i]]].push_back(i);
    ending[last[planned[i]]].push_back(i);
  }
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    for (size_t i : starting[n]) {
      const size_t size = aligned(g.values[planned[i]].nbytes);
      int best = -1;
      for (size_t b = 0; b < free_blocks.size(); ++b) {
        const Block& blk = free_blocks[b];
        if (blk.size < size) continue;
        if (best < 0 || blk.size < free_blocks[best].size ||
            (blk.size == free_blocks[best].size && blk.freed_at > free_blocks[best].freed_at))
          best = static_cast<int>(b);
      }
      if (best >= 0) {
        at[i] = static_cast<int64_t>(free_blocks[best].begin);
        free_blocks.erase(free_blocks.begin() + best);
      } else {
        at[i] = static_cast<int64_t>(end);
        end += size;
      }
    }
    for (size_t i : ending[n])
      free_blocks.push_back({static_cast<size_t>(at[i]), aligned(g.values[planned[i]].nbytes), static_cast<int64_t>(n)});
  }
  return at;
}

}  // namespace

int eliminate_dead_code(Graph& g) {
  std::vector<char> needed = kept_outside(g);
  std::vector<char> live(g.nodes.size(), 0);
  for (size_t i = g.nodes.size(); i-- > 0;) {
    const Node& n = g.nodes[i];
    // A node without outputs runs for what it writes into its inputs (the optimizer's updates).
    bool keep = n.outputs.empty();
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
    for (const TensorRef& r : n.outputs) g.values[r.value].kind = ValueKind::Constant;
    ++folded;
  }
  g.nodes = std::move(kept);
  return folded;
}

MemoryPlan plan_memory(Graph& g, bool reuse) {
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
  std::vector<int> planned, members;
  // A value made in place of another joins its block: the block's root lives for all of them.
  auto root_of = [&](int v) {
    while (reuse && g.values[v].shares >= 0) v = g.values[v].shares;
    return v;
  };
  for (size_t v = 0; v < g.values.size(); ++v) {
    Value& val = g.values[v];
    val.arena_offset = -1;
    if (val.kind == ValueKind::Internal && val.escapes) plan.escaping_bytes += val.nbytes;
    if (is_internal(val) && first[v] != none) members.push_back(static_cast<int>(v));
  }
  for (int v : members) {
    plan.unplanned_bytes += aligned(g.values[v].nbytes);
    const int r = root_of(v);
    if (r == v) {
      planned.push_back(v);
      continue;
    }
    first[r] = std::min(first[r], first[v]);
    last[r] = std::max(last[r], last[v]);
  }
  // The most bytes alive at once: a sweep over the nodes.
  std::vector<int64_t> delta(g.nodes.size() + 1, 0);
  for (int v : planned) {
    delta[first[v]] += static_cast<int64_t>(aligned(g.values[v].nbytes));
    delta[last[v] + 1] -= static_cast<int64_t>(aligned(g.values[v].nbytes));
  }
  int64_t live = 0;
  for (int64_t d : delta) plan.peak_live_bytes = std::max(plan.peak_live_bytes, static_cast<size_t>(live += d));

  const auto place_members = [&] {
    for (int v : members) g.values[v].arena_offset = g.values[root_of(v)].arena_offset;
  };
  if (!reuse) {
    size_t at = 0;
    for (int v : planned) {
      g.values[v].arena_offset = static_cast<int64_t>(at);
      at += aligned(g.values[v].nbytes);
    }
    plan.arena_bytes = at;
    return plan;
  }
  // Two plans; the smaller wins, the cache-friendly one when within 5% of the other.
  const std::vector<int64_t> lifo = plan_in_order(g, planned, first, last);
  const std::vector<int64_t> packed = plan_largest_first(g, planned, first, last);
  auto extent = [&](const std::vector<int64_t>& at) {
    size_t e = 0;
    for (size_t i = 0; i < planned.size(); ++i)
      e = std::max(e, static_cast<size_t>(at[i]) + aligned(g.values[planned[i]].nbytes));
    return e;
  };
  const size_t lifo_bytes = extent(lifo), packed_bytes = extent(packed);
  const bool use_lifo = static_cast<double>(lifo_bytes) <= 1.05 * static_cast<double>(packed_bytes);
  const std::vector<int64_t>& chosen = use_lifo ? lifo : packed;
  for (size_t i = 0; i < planned.size(); ++i) g.values[planned[i]].arena_offset = chosen[i];
  place_members();
  plan.arena_bytes = use_lifo ? lifo_bytes : packed_bytes;
  return plan;
}

std::string format_bytes(size_t bytes) {
  if (bytes >= (size_t{1} << 20)) return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20));
  if (bytes >= 1024) return fmt::format("{:.1f} KiB", static_cast<double>(bytes) / 1024);
  return fmt::format("{} B", bytes);
}

}  // namespace ingot::graph
