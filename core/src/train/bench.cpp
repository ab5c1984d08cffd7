// The bench run: config and model as `ingot run` builds them, random data created once in
// memory, then timed training steps, inference batches and batch-1 forwards.
#include "ingot/train/bench.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <ostream>
#include <random>

#include "compiled_updates.h"
#include "ingot/amp/autocast.h"
#include "ingot/base/allocator.h"
#include "ingot/base/error.h"
#include "ingot/base/grad_mode.h"
#include "ingot/config/backend_select.h"
#include "ingot/config/overrides.h"
#include "ingot/data/data_config.h"
#include "ingot/graph/compiled_step.h"
#include "ingot/io/safetensors.h"
#include "ingot/nn/checkpoint.h"
#include "ingot/nn/loss.h"
#include "ingot/nn/model_builder.h"
#include "ingot/ops/random.h"
#include "ingot/optim/optimizer_config.h"
#include "ingot/runtime/device_memory.h"
#include "ingot/runtime/memory_tracker.h"
#include "ingot/runtime/op_counts.h"
#include "ingot/runtime/profiler.h"
#include "ingot/runtime/registry.h"
#include "ingot/runtime/threads.h"
#include "ingot/train/pipeline.h"
#include "ingot/train/pipeline_schema.h"
#include "ingot/train/train_config.h"
#include "pipeline_state.h"

namespace ingot::train {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

void check_options(const BenchOptions& o) {
  const auto at_least = [](const char* flag, int64_t v, int64_t min) {
    if (v < min) throw ConfigError(fmt::format("{} {}: must be at least {}", flag, v, min));
  };
  at_least("--warmup", o.warmup, 0);
  at_least("--steps", o.steps, 1);
  at_least("--repeat", o.repeat, 1);
  at_least("--infer-batch", o.infer_batch, 1);
  at_least("--latency-iters", o.latency_iters, 1);
  if (o.batch_size) at_least("--batch-size", *o.batch_size, 1);
  if (o.threads) at_least("--threads", *o.threads, 1);
  if (o.infer_dtype != "f32" && o.infer_dtype != "bf16")
    throw ConfigError(fmt::format("--infer-dtype {}: expected f32 or bf16", o.infer_dtype));
}

Shape batched(int64_t batch, const Shape& sample) {
  Shape s{batch};
  for (int64_t d : sample) s.push_back(d);
  return s;
}

/// How a training step runs: the loss, train.amp and its loss scaler.
struct StepSetup {
  const nn::Loss& loss;
  const AmpConfig& amp;
  amp::GradScaler& scaler;
  std::vector<Tensor> params;
  graph::CompiledStep* compiled = nullptr;  ///< --compile: forward and backward as a graph
  CompiledUpdates* updates = nullptr;       ///< --compile: the optimizer step as a graph (when it can be)
};

/// bench/compare's activation memory, from one untimed training step: bytes allocated between
/// the step's start and the end of forward and loss, i.e. what the graph keeps for backward (with
/// autocast: the region's weight casts too), and the peak above the start during forward and
/// backward (where checkpointing's recomputation shows).
struct MemoryProbe {
  std::function<MemoryStats()> stats;
  std::function<void()> reset_peak;
  int64_t kept = 0;
  int64_t peak = 0;
};

/// One optimizer step on one batch as `ingot run` takes it (autocast, loss scaling), measured by
/// `probe` when given; returns the loss (reading it waits for the step's work).
double train_step(nn::Module& model, optim::Optimizer& opt, const Tensor& x, const Tensor& y, StepSetup& setup,
                  MemoryProbe* probe = nullptr) {
  ProfileScope phase(setup.compiled != nullptr ? "forward+backward" : "forward", "step");
  Tensor loss;
  {
    int64_t base = 0;
    if (probe != nullptr) {
      probe->reset_peak();
      base = probe->stats().allocated;
    }
    const auto forward_backward = [&]() -> std::vector<Tensor> {
      const amp::AutocastRegion region(setup.amp.dtype, setup.params, setup.amp.enabled);
      Tensor l = setup.loss(model(x), y);
      if (probe != nullptr && setup.compiled == nullptr) probe->kept = probe->stats().allocated - base;
      if (setup.compiled == nullptr) phase.next("backward");
      setup.scaler.scale(l).backward();
      return {l};
    };
    loss = setup.compiled != nullptr ? setup.compiled->run({x, y}, {{"train", 1}}, forward_backward).front()
                                     : forward_backward().front();
    if (probe != nullptr) probe->peak = probe->stats().peak_allocated - base;
  }
  const double value = loss.item();
  phase.next("optimizer");
  const bool finite = setup.scaler.unscale_(setup.params);
  if (finite) {
    if (setup.updates != nullptr) {
      setup.updates->step();
    } else {
      opt.step();
    }
  }
  setup.scaler.update(!finite);
  opt.zero_grad();
  return value;
}

/// A forward whose result is brought to the strided layout a caller would read (as a replayed
/// graph with --compile).
void infer(nn::Module& model, const Tensor& x, graph::CompiledStep* compiled) {
  const auto forward = [&] { return std::vector<Tensor>{model(x).strided()}; };
  (void)(compiled != nullptr ? compiled->run({x}, {{"train", 0}}, forward) : forward());
}

/// Milliseconds since `t0` once the device's queued work is done (ops on an accelerator return
/// before they finish).
double ms_when_done(Clock::time_point t0, Device device) {
  synchronize(device);
  return ms_since(t0);
}

/// The `--scaling` search: one untimed step per batch tried, doubling from `start` while it
/// fits, then bisecting between the largest that fits and the smallest that does not.
ScalingResult find_max_batch(int64_t limit, int64_t start, const std::function<int64_t(int64_t)>& peak_at) {
  ScalingResult r;
  r.limit_bytes = limit;
  std::map<int64_t, int64_t> peaks;
  const auto fits = [&](int64_t b) {
    if (!peaks.count(b)) peaks[b] = peak_at(b), ++r.trials;
    return peaks[b] <= limit;
  };
  int64_t lo = 0, hi = 0;  // lo fits (0: none known), hi does not (0: none known)
  for (int64_t b = start; b >= 1; b /= 2) {
    if (fits(b)) {
      lo = b;
      break;
    }
    hi = b;
  }
  if (lo > 0 && hi == 0) {
    for (int64_t b = lo * 2;; b *= 2) {
      if (!fits(b)) {
        hi = b;
        break;
      }
      lo = b;
    }
  }
  while (lo > 0 && hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  r.max_batch = lo;
  r.peak_bytes = lo > 0 ? peaks[lo] : 0;
  r.next_batch = hi;
  r.next_peak_bytes = hi > 0 ? peaks[hi] : 0;
  return r;
}

int64_t peak_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<int64_t>(u.ru_maxrss) * 1024;  // Linux reports KiB
}

}  // namespace

int64_t parse_memory_size(const std::string& text, const std::string& flag) {
  size_t used = 0;
  double value = 0.0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  std::string unit = text.substr(used);
  std::transform(unit.begin(), unit.end(), unit.begin(), [](unsigned char c) { return std::tolower(c); });
  const std::map<std::string, double> units{{"", 1.0},   {"b", 1.0},      {"kb", 1e3},        {"mb", 1e6},
                                            {"gb", 1e9}, {"kib", 1024.0}, {"mib", 1048576.0}, {"gib", 1073741824.0}};
  const auto it = units.find(unit);
  if (used == 0 || it == units.end() || !(value > 0.0) || value * it->second > 9.0e18)
    throw ConfigError(
        fmt::format("{} {}: expected a size such as 200MiB, 1.5GiB, 300MB or a number of bytes", flag, text));
  return static_cast<int64_t>(value * it->second);
}

BenchResult run_bench(const BenchOptions& o, std::ostream& log) {
  check_options(o);
  const config::Config cfg = config::load_with_overrides(o.config, o.overrides, pipeline_schema());
  const std::string& file = cfg.file();
  if (!cfg.has("model")) throw ConfigError(fmt::format("{}: ingot bench needs a model: section", file));
  if (o.threads) {
    set_num_threads(*o.threads);
  } else if (auto threads = cfg.threads()) {
    set_num_threads(*threads);
  }
  const uint64_t seed = static_cast<uint64_t>(cfg.seed().value_or(0));
  default_generator().manual_seed(seed);
  const config::BackendSelection sel = config::select_backends(cfg.backend(), cfg.where("backend"));
  if (!sel.note.empty()) log << sel.note << "\n";

  const data::DataConfig data_cfg = data::parse_data_config(cfg.node("data"), file);
  // The same generators as `ingot run`, so both start from the same weights.
  Generator init_gen(seed);
  Generator dropout_gen(seed ^ PipelineState::kDropoutStream);
  const nn::ModulePtr model = build_model_on(cfg, Device::cpu(), init_gen, dropout_gen);
  const std::optional<Shape> sample = nn::model_input_shape(cfg.node("model"), file);
  if (!sample)
    throw ConfigError(fmt::format("{}: ingot bench needs model.input_shape (e.g. [1, 28, 28]) to make its inputs",
                                  cfg.where("model")));
  int64_t classes = 0;
  try {
    classes = model->output_shape(batched(1, *sample)).back();
  } catch (const ShapeError& e) {
    throw ConfigError(fmt::format("{}: the model does not fit model.input_shape {}: {}", cfg.where("model"),
                                  sample->str(), e.what()));
  }
  if (!o.save_init.empty()) {
    io::save_safetensors(o.save_init, model->state_dict(), io::Metadata{{"format", "pt"}});
    log << fmt::format("initial weights: {}\n", o.save_init.string());
  }
  // train.optimizer and the loss only (with `ingot run`'s defaults): the schedule, epochs and the
  // rest do not apply here.
  const TrainConfig train_cfg = parse_train_config(cfg.node("train"), file);
  const Device device = sel.device;
  model->to(device);
  BenchResult r;
  if (train_cfg.checkpointing()) {  // train.checkpointing, as `ingot run` applies it
    const nn::CheckpointPlan plan = nn::apply_checkpointing(
        *model, {train_cfg.checkpointing_segments, train_cfg.checkpointing_blocks},
        [&](int64_t batch) {
          Generator gen(seed + 3);
          return randn(batched(batch, *sample), DType::F32, &gen).to(device);
        },
        cfg.where(train_cfg.checkpointing_blocks ? "train.checkpointing.blocks" : "train.checkpointing.segments"));
    r.checkpointing_segments = static_cast<int64_t>(plan.ends.size());
    r.checkpointing_policy = train_cfg.checkpointing_blocks ? "blocks" : "balanced";
    r.checkpointing_plan = plan.names;
    r.checkpointing_estimated_peak_bytes = plan.peak * o.batch_size.value_or(data_cfg.batch_size);
  }
  const std::unique_ptr<optim::Optimizer> opt =
      optim::make_optimizer(train_cfg.optimizer, model->named_parameters(), file);

  r.version = INGOT_VERSION;
  r.config = o.config;
  r.model = cfg.get_string("model.preset", "layers");
  r.params = model->num_parameters();
  r.backend = fmt::format("{} [{}]", sel.device.str(), fmt::join(sel.enabled, ", "));
  r.threads = num_threads();
  r.batch_size = o.batch_size.value_or(data_cfg.batch_size);
  r.infer_batch = o.infer_batch;
  r.warmup = o.warmup;
  r.steps = o.steps;
  r.repeat = o.repeat;

  // The data, made once: what a loader would hand over, minus the loading.
  Generator data_gen(seed + 1);
  const Tensor x = randn(batched(r.batch_size, *sample), DType::F32, &data_gen).to(device);
  std::mt19937_64 label_rng(seed + 2);
  std::vector<int64_t> labels(static_cast<size_t>(r.batch_size));
  for (int64_t& l : labels) l = static_cast<int64_t>(label_rng() % static_cast<uint64_t>(classes));
  const Tensor y = Tensor::from_vector(labels, Shape{r.batch_size}).to(device);
  const Tensor x_infer_f32 = randn(batched(r.infer_batch, *sample), DType::F32, &data_gen);
  const Tensor x_one_f32 = randn(batched(1, *sample), DType::F32, &data_gen);
  log << fmt::format("bench: {} ({} parameters), train batch {}, inference batch {}, {} threads, {}\n", r.model,
                     r.params, r.batch_size, r.infer_batch, r.threads, r.backend);

  // Training.
  reset_op_counts();
  model->train();
  amp::GradScaler scaler(train_cfg.amp.scaler);
  StepSetup setup{train_cfg.loss, train_cfg.amp, scaler, model->parameters()};
  const bool compile = o.compile || train_cfg.compile.enabled;
  graph::CompileOptions compile_options = train_cfg.compile.options;
  if (!o.dump_graph.empty()) compile_options.dump_dir = o.dump_graph / "train";
  std::optional<graph::CompiledStep> train_graph, infer_graph;
  if (compile) {
    train_graph.emplace(compile_options, model->parameters(), model->buffers());
    setup.compiled = &*train_graph;
    if (!o.dump_graph.empty()) compile_options.dump_dir = o.dump_graph / "infer";
    compile_options.freeze_weights = true;  // inference and latency run after training's timing, on fixed weights
    infer_graph.emplace(compile_options, std::vector<Tensor>{}, model->buffers());
  }
  std::unique_ptr<CompiledUpdates> train_updates;
  if (compile) {
    graph::CompileOptions update_options = train_cfg.compile.options;
    if (!o.dump_graph.empty()) update_options.dump_dir = o.dump_graph / "train";
    std::string why_not;
    train_updates = CompiledUpdates::make(*opt, update_options, why_not);
    if (train_updates) {
      setup.updates = train_updates.get();
    } else {
      log << fmt::format("bench: the optimizer step runs eager: {}\n", why_not);
    }
  }
  graph::CompiledStep* const infer_compiled = compile ? &*infer_graph : nullptr;
  if (train_cfg.amp.enabled) {
    if (const std::string why = amp::autocast_unsupported_reason(device, train_cfg.amp.dtype); !why.empty())
      throw ConfigError(fmt::format("{}: {}", cfg.where("train.amp.dtype"), why));
    r.dtype = fmt::format("{} autocast", amp::amp_dtype_name(train_cfg.amp.dtype));
  }
  for (int64_t i = 0; i < o.warmup; ++i) train_step(*model, *opt, x, y, setup);
  // The device allocator's own counters where its backend reports them, else core's view of the
  // bytes it allocated there (no cache information).
  const bool device_stats = memory_stats_available(device);
  Allocator& core_view = BackendRegistry::instance().allocator(device);
  const auto stats_now = [&] { return device_stats ? memory_stats(device) : core_view.stats(); };
  const auto reset_peak = [&] { device_stats ? reset_peak_memory_stats(device) : core_view.reset_peak(); };
  MemoryProbe probe{stats_now, reset_peak};
  (void)train_step(*model, *opt, x, y, setup, &probe);
  r.activation_bytes = probe.kept;
  r.step_peak_bytes = probe.peak;
  if (o.scaling_limit) {
    const MemoryBudget budget = memory_budget(device);
    if (budget.available > 0 && *o.scaling_limit > budget.available)
      throw ConfigError(fmt::format("--scaling {}: more than the {} available on {} ({}): give a smaller limit",
                                    format_memory_bytes(*o.scaling_limit), format_memory_bytes(budget.available),
                                    device.str(), budget.bound_by));
    const auto peak_at = [&](int64_t batch) {
      Generator gen(seed + 4);
      const Tensor xb = randn(batched(batch, *sample), DType::F32, &gen).to(device);
      std::vector<int64_t> lb(static_cast<size_t>(batch));
      for (int64_t& l : lb) l = static_cast<int64_t>(label_rng() % static_cast<uint64_t>(classes));
      const Tensor yb = Tensor::from_vector(lb, Shape{batch}).to(device);
      reset_peak();
      (void)train_step(*model, *opt, xb, yb, setup);
      return stats_now().peak_allocated;
    };
    r.scaling = find_max_batch(*o.scaling_limit, r.batch_size, peak_at);
    log << fmt::format("scaling: {} training steps to find the largest batch within {}\n", r.scaling->trials,
                       format_memory_bytes(*o.scaling_limit));
  }
  reset_peak();
  const MemoryStats before = stats_now();
  if (o.profile_dir) Profiler::instance().start();
  std::vector<double> step_ms, train_ips;
  double last_loss = 0.0;
  for (int64_t rep = 0; rep < o.repeat; ++rep) {
    const auto t0 = Clock::now();
    for (int64_t i = 0; i < o.steps; ++i) last_loss = train_step(*model, *opt, x, y, setup);
    const double ms = ms_since(t0);
    step_ms.push_back(ms / static_cast<double>(o.steps));
    train_ips.push_back(1000.0 * static_cast<double>(r.batch_size * o.steps) / ms);
  }
  if (o.profile_dir) save_profile(*o.profile_dir, log);
  const MemoryStats after = stats_now();
  if (!std::isfinite(last_loss)) log << fmt::format("warning: the training loss became {}\n", last_loss);
  r.train_ms_per_step = spread_of(step_ms);
  r.train_images_per_s = spread_of(train_ips);
  r.peak_allocated_bytes = after.peak_allocated;
  const int64_t allocations = after.allocations - before.allocations;
  r.train_cache_hit_rate =
      allocations > 0 ? static_cast<double>(after.cache_hits - before.cache_hits) / static_cast<double>(allocations)
                      : 1.0;

  // Inference and batch-1 latency: eval mode, no graph; bf16 casts the model and inputs first
  // (reduced precision: reported as such).
  model->eval();
  const NoGradGuard no_grad;
  r.infer_dtype = o.infer_dtype;
  const DType infer_type = o.infer_dtype == "bf16" ? DType::BF16 : DType::F32;
  if (infer_type != DType::F32) model->to(infer_type);
  const Tensor x_infer = x_infer_f32.to(infer_type).to(device), x_one = x_one_f32.to(infer_type).to(device);
  // Under train.amp, inference runs under the same autocast policy (weights cast once).
  const bool autocast = train_cfg.amp.enabled && infer_type == DType::F32;
  const amp::AutocastRegion infer_region(train_cfg.amp.dtype, model->parameters(), autocast);
  if (autocast) r.infer_dtype = r.dtype;
  for (int64_t i = 0; i < o.warmup; ++i) infer(*model, x_infer, infer_compiled);
  std::vector<double> batch_ms, infer_ips;
  for (int64_t rep = 0; rep < o.repeat; ++rep) {
    const auto t0 = Clock::now();
    for (int64_t i = 0; i < o.steps; ++i) infer(*model, x_infer, infer_compiled);
    const double ms = ms_when_done(t0, device);
    batch_ms.push_back(ms / static_cast<double>(o.steps));
    infer_ips.push_back(1000.0 * static_cast<double>(r.infer_batch * o.steps) / ms);
  }
  r.infer_ms_per_batch = spread_of(batch_ms);
  r.infer_images_per_s = spread_of(infer_ips);

  for (int64_t i = 0; i < std::max<int64_t>(o.warmup, 1); ++i) infer(*model, x_one, infer_compiled);
  std::vector<double> one_ms;
  for (int64_t rep = 0; rep < o.repeat; ++rep)
    for (int64_t i = 0; i < o.latency_iters; ++i) {
      const auto t0 = Clock::now();
      infer(*model, x_one, infer_compiled);
      one_ms.push_back(ms_when_done(t0, device));
    }
  std::sort(one_ms.begin(), one_ms.end());
  r.latency_b1_median_ms = spread_of(one_ms).median;
  const auto rank90 = static_cast<size_t>(std::ceil(0.9 * static_cast<double>(one_ms.size())));  // nearest rank
  r.latency_b1_p90_ms = one_ms[std::clamp<size_t>(rank90, 1, one_ms.size()) - 1];
  r.peak_rss_bytes = peak_rss_bytes();
  if (compile) {
    r.compiled = true;
    r.compile_graphs = train_graph->stats().graphs + infer_graph->stats().graphs;
    r.compile_train_replays = train_graph->stats().replayed;
    r.compile_planned_bytes = static_cast<int64_t>(train_graph->stats().planned_bytes);
    r.compile_fused = train_graph->stats().fused;
    r.compile_winograd = compile_options.winograd ? train_graph->stats().winograd : -1;
    r.compile_fallback = !train_graph->stats().fallback.empty() ? train_graph->stats().fallback
                                                                : infer_graph->stats().fallback;
  }
  r.device = model->device().str();
  r.ops_by_backend = ops_by_backend();
  return r;
}

}  // namespace ingot::train
