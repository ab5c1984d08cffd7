// Checkpoint plans: the units' measured costs and the segment ends chosen from them.
//
// The memory model, per sample: segment j covers units [b_j, e_j); it keeps its input
// in_j (the output of unit b_j - 1; the model's input is the caller's and counts 0), and while the
// backward pass runs it, the inputs of segments 0..j are still held, its own activations A_j (the
// sum of its units' kept bytes) are back (recomputed, or stored for the last segment) and its
// gradients are in flight (about three times its largest output: the one flowing in, the one
// flowing out, and a residual branch's). Its peak is the sum of those three;
// the plan's estimate is the largest over the segments, plain training being one segment.
#include "ingot/nn/checkpoint_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <utility>

#include "ingot/base/error.h"
#include "ingot/base/grad_mode.h"
#include "ingot/ops/random.h"
#include "ingot/runtime/device_memory.h"

namespace ingot::nn {
namespace {

/// Puts back, when it ends, the state every generator had at its first draw while it lived.
class GeneratorRestore final : public GeneratorObserver {
 public:
  GeneratorRestore() : prev_(set_generator_observer(this)) {}
  ~GeneratorRestore() override {
    set_generator_observer(prev_);
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) it->first->set_state(it->second);
  }
  GeneratorRestore(const GeneratorRestore&) = delete;
  GeneratorRestore& operator=(const GeneratorRestore&) = delete;
  void before_draw(Generator& gen) override {
    const bool seen = std::any_of(saved_.begin(), saved_.end(), [&](const auto& s) { return s.first == &gen; });
    if (!seen) saved_.emplace_back(&gen, gen.state());
    if (prev_ != nullptr) prev_->before_draw(gen);
  }

 private:
  GeneratorObserver* prev_;
  std::vector<std::pair<Generator*, Generator::State>> saved_;
};

/// One forward of `x` unit by unit: bytes allocated after each unit (relative to the start),
/// each unit's output bytes, and where fused runs start.
struct Trace {
  std::vector<int64_t> after, output;
  std::vector<bool> starts;
};

Trace trace(const std::vector<Sequential::Unit>& units, const Tensor& x) {
  const EnableGradGuard grad;
  const Device device = x.device();
  const size_t n = units.size();
  Trace t{std::vector<int64_t>(n), std::vector<int64_t>(n), std::vector<bool>(n)};
  Tensor y = x;
  const int64_t before = memory_stats(device).allocated;
  for (size_t i = 0; i < n;) {
    const size_t covered = Sequential::run_unit(units, i, y);
    const int64_t now = memory_stats(device).allocated - before;
    for (size_t k = i; k < i + covered && k < n; ++k) {
      t.after[k] = now;
      t.output[k] = y.numel() * dtype_size(y.dtype());
      t.starts[k] = k == i;
    }
    i += covered;
  }
  return t;
}

int64_t sum_kept(const std::vector<UnitCost>& c, size_t b, size_t e) {
  int64_t s = 0;
  for (size_t i = b; i < e; ++i) s += c[i].kept;
  return s;
}

int64_t max_output(const std::vector<UnitCost>& c, size_t b, size_t e) {
  int64_t m = 0;
  for (size_t i = b; i < e; ++i) m = std::max(m, c[i].output);
  return m;
}

/// What the backward pass holds while it runs segment [b, e) besides the earlier inputs.
int64_t segment_cost(const std::vector<UnitCost>& c, size_t b, size_t e) {
  return sum_kept(c, b, e) + 3 * max_output(c, b, e);
}

int64_t input_of(const std::vector<UnitCost>& c, size_t b) { return b == 0 ? 0 : c[b - 1].output; }

/// The ends of a partition into at most `segments` segments whose every peak is <= `budget`
/// with the fewest segments and, among those, the least held input; empty when none exists.
/// best[s][e]: the least sum of inputs held by s segments covering units [0, e).
std::vector<size_t> partition_within(const std::vector<UnitCost>& c, int64_t segments, int64_t budget) {
  const size_t n = c.size();
  constexpr int64_t kNone = std::numeric_limits<int64_t>::max();
  const auto k = static_cast<size_t>(segments);
  std::vector<std::vector<int64_t>> best(k + 1, std::vector<int64_t>(n + 1, kNone));
  std::vector<std::vector<size_t>> from(k + 1, std::vector<size_t>(n + 1, 0));
  best[0][0] = 0;
  for (size_t s = 0; s < k; ++s) {
    for (size_t b = 0; b < n; ++b) {
      if (best[s][b] == kNone || !c[b].starts_run) continue;
      const int64_t held = best[s][b] + input_of(c, b);
      for (size_t e = b + 1; e <= n; ++e) {
        if (e < n && !c[e].starts_run) continue;
        if (held + segment_cost(c, b, e) > budget) break;  // longer segments only cost more
        if (held < best[s + 1][e]) best[s + 1][e] = held, from[s + 1][e] = b;
      }
    }
    if (best[s + 1][n] != kNone) {
      std::vector<size_t> ends;
      for (size_t e = n, t = s + 1; t > 0; e = from[t][e], --t) ends.push_back(e);
      std::reverse(ends.begin(), ends.end());
      return ends;
    }
  }
  return {};
}

}  // namespace

std::vector<UnitCost> measure_units(Sequential& model, const std::function<Tensor(int64_t)>& make_input) {
  const std::vector<Sequential::Unit> units = model.units();
  std::vector<std::pair<Tensor, Tensor>> buffers;  // (the model's, a copy)
  for (const auto& [name, b] : model.named_buffers()) buffers.emplace_back(b, b.clone());
  Trace small, large;
  {
    const GeneratorRestore rng;
    small = trace(units, make_input(2));
    large = trace(units, make_input(4));
  }
  for (const auto& [b, saved] : buffers) b.copy_(saved);
  std::vector<UnitCost> costs(units.size());
  for (size_t i = 0; i < units.size(); ++i) {
    const int64_t ds = small.after[i] - (i == 0 ? 0 : small.after[i - 1]);
    const int64_t dl = large.after[i] - (i == 0 ? 0 : large.after[i - 1]);
    costs[i].kept = std::max<int64_t>(0, (dl - ds) / 2);
    costs[i].output = std::max<int64_t>(0, (large.output[i] - small.output[i]) / 2);
    costs[i].starts_run = large.starts[i];
  }
  return costs;
}

int64_t estimated_peak(const std::vector<UnitCost>& costs, const std::vector<size_t>& ends) {
  int64_t held = 0, peak = 0;
  size_t b = 0;
  for (size_t e : ends) {
    held += input_of(costs, b);
    peak = std::max(peak, held + segment_cost(costs, b, e));
    b = e;
  }
  return peak;
}

CheckpointPlan balanced_plan(const std::vector<UnitCost>& costs, int64_t segments) {
  INGOT_CHECK(!costs.empty() && segments >= 1, "balanced_plan: {} segments over {} units", segments, costs.size());
  CheckpointPlan plan;
  plan.plain = estimated_peak(costs, {costs.size()});
  int64_t lo = 0, hi = plan.plain;  // hi: one segment always fits
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (partition_within(costs, segments, mid).empty())
      lo = mid + 1;
    else
      hi = mid;
  }
  plan.ends = partition_within(costs, segments, lo);
  plan.peak = estimated_peak(costs, plan.ends);
  return plan;
}

CheckpointPlan block_plan(const std::vector<Sequential::Unit>& units, const std::vector<UnitCost>& costs) {
  CheckpointPlan plan;
  plan.plain = estimated_peak(costs, {costs.size()});
  for (size_t i = 1; i < units.size(); ++i) {
    const bool edge = units[i].module().is_block() || units[i - 1].module().is_block();
    if (edge && costs[i].starts_run) plan.ends.push_back(i);
  }
  plan.ends.push_back(units.size());
  plan.peak = estimated_peak(costs, plan.ends);
  return plan;
}

void name_segments(CheckpointPlan& plan, const std::vector<Sequential::Unit>& units) {
  plan.names.clear();
  size_t b = 0;
  for (size_t e : plan.ends) {
    plan.names.push_back(e - b == 1 ? units[b].name : units[b].name + "-" + units[e - 1].name);
    b = e;
  }
}

std::string CheckpointPlan::describe(const std::string& how, int64_t batch) const {
  const auto mib = [batch](int64_t per_sample) { return static_cast<double>(per_sample * batch) / (1024.0 * 1024.0); };
  if (plain == 0) return fmt::format("{} segments ({}): {}", ends.size(), how, names.empty() ? "" : names.front() + " ...");
  return fmt::format("{} segments ({}): estimated activation peak {:.1f} MiB, {:.1f} MiB without, at batch {}",
                     ends.size(), how, mib(peak), mib(plain), batch);
}

}  // namespace ingot::nn
