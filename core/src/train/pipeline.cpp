// The pipeline runner: builds what the config describes (before any run folder is touched),
// opens or resumes the run folder, runs the stages in order, writes the summary.
#include "ingot/train/pipeline.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <sstream>

#include "ingot/amp/autocast.h"
#include "ingot/base/allocator.h"
#include "ingot/data/data_config.h"
#include "ingot/io/atomic_write.h"
#include "ingot/io/safetensors.h"
#include "ingot/io/state_dict.h"
#include "ingot/nn/checkpoint.h"
#include "ingot/nn/model_builder.h"
#include "ingot/ops/creation.h"
#include "ingot/ops/random.h"
#include "ingot/optim/lr_schedule.h"
#include "ingot/optim/optimizer_config.h"
#include "ingot/parallel/pipeline_parallel.h"
#include "ingot/parallel/sync_batch_norm.h"
#include "ingot/runtime/device_memory.h"
#include "ingot/runtime/memory_tracker.h"
#include "ingot/runtime/op_counts.h"
#include "ingot/runtime/threads.h"
#include "ingot/train/callback_registry.h"
#include "ingot/train/checkpoint.h"
#include "ingot/train/console_log.h"
#include "ingot/train/data_parallel.h"
#include "ingot/train/distributed_run.h"
#include "ingot/train/init_from.h"
#include "ingot/train/interrupt.h"
#include "ingot/train/logging_config.h"
#include "ingot/train/memory_estimate.h"
#include "ingot/train/memory_report.h"
#include "ingot/train/model_fit.h"
#include "ingot/train/out_of_memory.h"
#include "ingot/train/resume_check.h"
#include "ingot/train/run_report.h"
#include "ingot/train/stage.h"
#include "ingot/train/stage_report.h"
#include "pipeline_state.h"

namespace ingot::train {
namespace {

/// The preset keys the data sets when the config leaves them out: a language model's vocabulary,
/// a classifier's classes, and a BERT's vocabulary and padding token as well.
std::map<std::string, int64_t> data_model_defaults(const YAML::Node& model, const data::Dataset& data) {
  std::map<std::string, int64_t> keys;
  if (!model["preset"] || model["preset"].Scalar() == "mlp") return keys;
  const std::string preset = model["preset"].Scalar();
  if (preset == "gpt") {
    keys["vocab_size"] = data.num_classes();
  } else if (preset == "bert") {
    keys["vocab_size"] = data.vocab_size();
    if (const int64_t pad = data.special_tokens().pad; pad >= 0) keys["pad_id"] = pad;
    if (!model["head"] || model["head"].Scalar() != "mlm") keys["classes"] = data.num_classes();
  } else {
    keys["classes"] = data.num_classes();
  }
  for (auto it = keys.begin(); it != keys.end();) it = model[it->first] ? keys.erase(it) : std::next(it);
  return keys;
}

}  // namespace

std::unique_ptr<PipelineState> build_pipeline(const config::Config& cfg, Device device, std::ostream& out,
                                              const parallel::ParallelConfig& parallel,
                                              const parallel::ProcessGroup* group,
                                              const std::filesystem::path& run_folder) {
  const std::string& file = cfg.file();
  if (!cfg.has("model")) throw ConfigError(fmt::format("{}: the pipeline needs a model: section", file));
  auto s = std::make_unique<PipelineState>(cfg, out, static_cast<uint64_t>(cfg.seed().value_or(0)));
  s->parallel = parallel;
  s->group = group;
  s->stages = make_stages(cfg.node("stages"), file);
  if (group != nullptr) check_stages_for_distributed(s->stages, file);
  s->data = data::parse_data_config(cfg.node("data"), file);
  s->data.input_shape = nn::model_input_shape(cfg.node("model"), file);
  s->data.tokenizer_dir = run_folder;
  s->train = parse_train_config(cfg.node("train"), file);
  s->report = parse_report_config(cfg.node("report"), file);
  // Data parallel: each rank trains on its shard; data.batch_size is each rank's.
  const bool ddp = group != nullptr && parallel.mode == "ddp";
  s->loaders = ddp ? data::make_data_loaders(s->data, s->seed, group->rank(), group->world_size())
                   : data::make_data_loaders(s->data, s->seed);
  // With what the dataset made (its tokenizer's file), for the run's config; reset rebinds (`=`
  // between nodes would write into the config's tree).
  s->data.section.reset(s->loaders.section);
  // A preset without `classes` (or a language model's vocab_size) gets the data's (what the run
  // records in config.resolved.yaml).
  const YAML::Node model_node = cfg.node("model");
  s->inferred_model_keys = data_model_defaults(model_node, s->loaders.train->dataset());
  std::string init_report;
  s->model = build_model_on(cfg, device, s->init_gen, s->dropout_gen, &init_report, s->inferred_model_keys);
  if (!init_report.empty()) out << init_report << "\n";
  if (s->train.amp.enabled) {
    if (const std::string why = amp::autocast_unsupported_reason(device, s->train.amp.dtype); !why.empty())
      throw ConfigError(fmt::format("{}: {}", cfg.where("train.amp.dtype"), why));
  }
  s->scaler = std::make_unique<amp::GradScaler>(s->train.amp.scaler);
  if (s->loaders.validation) {
    s->selection = std::make_unique<ModelSelection>(s->train.early_stopping);
  } else if (s->train.early_stopping.enabled) {
    throw ConfigError(
        fmt::format("{}: train.early_stopping watches a validation split, and this run has none: add "
                    "data.validation: {{fraction: 0.1}} (or the dataset's own validation folder)",
                    cfg.where("train.early_stopping")));
  }
  if (s->train.early_stopping.enabled && !s->train.eval_every_epoch)
    throw ConfigError(
        fmt::format("{}: train.early_stopping needs train.eval_every_epoch: true (it validates after each "
                    "epoch)",
                    cfg.where("train.early_stopping")));
  const Shape sample = s->loaders.train->dataset().sample_shape();
  check_model_fits_data(*s->model, model_node, file, s->data.input_shape, sample,
                        s->loaders.train->dataset().num_classes(), s->loaders.train->dataset().target_shape());
  int64_t checkpoint_peak = 0;     // per sample, when checkpointing
  if (s->train.checkpointing()) {  // train.checkpointing: recompute segments in backward
    const nn::CheckpointPlan plan = nn::apply_checkpointing(
        *s->model, {s->train.checkpointing_segments, s->train.checkpointing_blocks},
        [&](int64_t batch) {
          Shape shape{batch};
          for (int64_t d : sample) shape.push_back(d);
          if (s->loaders.train->dataset().input_dtype() == DType::I64)  // token 0 at every position
            return zeros(shape, DType::I64, device);
          Generator gen(0);  // the run's generators stay untouched
          return uniform(shape, 0.0, 1.0, DType::F32, &gen, device);
        },
        cfg.where(s->train.checkpointing_blocks ? "train.checkpointing.blocks" : "train.checkpointing.segments"));
    s->checkpointing = plan.describe(
        s->train.checkpointing_blocks ? "one per block" : "balanced by measured activations", s->data.batch_size);
    checkpoint_peak = plan.peak;
  }
  if (group != nullptr && parallel.mode == "pipeline")  // the split fits the model and the ranks
    (void)parallel::pipeline_bounds(parallel.stages, static_cast<int64_t>(s->model->children().size()),
                                    group->world_size(), cfg.where("parallel.stages"));
  if (ddp && parallel.sync_batchnorm) {  // BatchNorm statistics over the global batch
    const int replaced = parallel::convert_sync_batchnorm(*s->model, group->comm());
    out << fmt::format("parallel: sync_batchnorm: {} BatchNorm layer(s) share statistics across the {} ranks\n",
                       replaced, group->world_size());
  }
  s->optimizer = optim::make_optimizer(s->train.optimizer, s->model->named_parameters(), file);
  s->plan = make_train_plan(s->train, s->loaders.train->num_batches());
  s->schedule = optim::make_schedule(s->train.scheduler, file, s->plan.total_steps);
  s->class_names = s->loaders.class_names;
  s->callbacks = make_callbacks(s->train.callbacks, file);
  // First, so gradients are averaged before any other callback reads them.
  if (ddp) s->callbacks.insert(s->callbacks.begin(), std::make_unique<DataParallelCallback>(*group, parallel));
  // Memory, before training allocates any of it: refused here rather than killed later.
  const int state = s->optimizer->state_tensors_per_param();
  // Datasets hold their samples as f32 in host memory.
  const int64_t dataset_bytes =
      (s->loaders.train->dataset().size() + s->loaders.test->dataset().size()) * sample.numel() * 4;
  s->memory = estimate_training_memory(
      *s->model, sample, s->data.batch_size, state, s->data.workers * s->data.prefetch + 2, dataset_bytes, device,
      {.element_bytes = s->train.amp.enabled ? 2 : 0, .checkpoint_peak_per_sample = checkpoint_peak});
  const bool trains = std::any_of(s->stages.begin(), s->stages.end(), [](const auto& st) { return st->trains(); });
  s->memory_budget = memory_budget(device);
  if (trains && s->train.memory_check) {
    try {
      check_memory_fits(s->memory, s->memory_budget, device);
    } catch (const InputError& e) {
      throw InputError(fmt::format("{}; {}", e.what(), out_of_memory_levers(s->train, s->data.batch_size)));
    }
  }
  return s;
}

namespace {

/// InputError when `pos` cannot be a position of this run: past its epochs or an epoch's batches,
/// or more optimizer steps than the batches before it give (a step is one group of
/// train.accumulate batches; skipped steps only make fewer).
void check_position(const TrainPosition& pos, const TrainPlan& plan, int64_t accumulate) {
  const int64_t most = pos.epoch * plan.steps_per_epoch + (pos.batch + accumulate - 1) / accumulate;
  if (pos.epoch > plan.epochs || pos.batch > plan.batches_per_epoch || pos.step > most || pos.step > plan.total_steps)
    throw InputError(
        fmt::format("its position (epoch {}, batch {}, step {}) is impossible here ({} epochs of {} "
                    "batches, {} steps in all; at most {} steps by then)",
                    pos.epoch, pos.batch, pos.step, plan.epochs, plan.batches_per_epoch, plan.total_steps, most));
}

/// Puts the run where checkpoint `c` was taken: model, optimizer, position, dropout generator,
/// loss scaler, best-epoch tracker. Throws (InputError, ShapeError, ...) when it does not fit this
/// run; whatever it changed before is overwritten by the next checkpoint that does.
void apply_checkpoint(PipelineState& s, const Checkpoint& c) {
  check_position(c.position, s.plan, s.train.accumulate);
  s.model->load_state_dict(c.model, /*strict=*/true);
  s.optimizer->load_state_dict(c.optimizer);
  if (s.scaler->enabled() && !c.scaler.empty()) s.scaler->load_state_dict(c.scaler);
  if (s.selection) s.selection->restore(c.selection);
  s.position = c.position;
  s.dropout_gen.set_state(s.position.rng);
}

/// Restores the run from the checkpoint `latest` names or, when that one is missing, damaged or
/// does not fit the run (its shapes, its position), from the newest one that does (saying so).
/// InputError naming each that failed when none does. Returns the file it restored from.
std::filesystem::path restore_checkpoint(PipelineState& s) {
  std::string problems;
  for (const auto& stem : s.run->checkpoints_to_try(&problems)) {
    const std::filesystem::path file = stem.string() + ".safetensors";
    try {
      const Checkpoint c = load_checkpoint(file);
      io::require_finite(c.model, file.string());  // (an older checkpoint carries no checksum to vouch for it)
      try {
        apply_checkpoint(s, c);
      } catch (const OutOfMemoryError&) {
        throw;  // (not the checkpoint's fault)
      } catch (const Error& e) {
        throw InputError(fmt::format("{}: the checkpoint does not fit this run: {}", file.string(), e.what()));
      }
      if (!problems.empty())
        s.out << fmt::format("warning: {}; resuming from {}, the newest checkpoint that verifies\n", problems,
                             file.string());
      if (!c.note.empty()) s.out << fmt::format("note: {}: {}\n", file.string(), c.note);
      return file;
    } catch (const InputError& e) {
      problems += (problems.empty() ? "" : "; ") + std::string(e.what());
    }
  }
  throw InputError(
      fmt::format("{}: no checkpoint loads ({}): start over with --force", s.run->path().string(), problems));
}

/// Opens runs/<name>/ (create, force or resume), writes or checks config.resolved.yaml, opens
/// metrics.jsonl and, on resume, restores model, optimizer and position from the last checkpoint.
void open_run(PipelineState& s, const config::BackendSelection& backends, const RunOptions& options) {
  const config::Config& cfg = s.cfg;
  INGOT_CHECK_AS(!(options.resume && s.group != nullptr && s.parallel.mode == "pipeline"), ConfigError,
                 "{}: --resume is not supported with parallel.mode: pipeline yet (it saves no checkpoint); start "
                 "over with --force",
                 cfg.file());
  if (!s.writes_files()) {
    // Another rank than 0: rank 0 opens (or moves aside) the folder first; this one only reads it
    // (a resume's checkpoint) and keeps no metrics.
    s.group->comm().barrier();
    s.run.emplace(RunDir::view(options.runs_dir / cfg.name()));
    s.metrics = std::make_unique<MetricsLog>();
    s.position.rng = s.dropout_gen.state();
    if (options.resume) restore_checkpoint(s);
    return;
  }
  s.run.emplace(RunDir::open(cfg.name(), run_dir_mode(options.resume, options.force), options.runs_dir));
  if (s.run->moved_aside()) {
    s.out << fmt::format("previous run moved to {}\n", s.run->moved_aside()->string());
    for (const auto& old : s.run->remove_old_copies(options.keep_old))
      s.out << fmt::format("deleted {} (--keep-old {} keeps the newest copies only)\n", old.string(), options.keep_old);
  }
  YAML::Node resolved = YAML::Clone(cfg.root());
  resolved["data"] = data::data_config_yaml(s.data);
  resolved["train"]["loss"] = s.train.loss.resolved;
  for (const auto& [key, value] : s.inferred_model_keys) resolved["model"][key] = value;
  const YAML::Node split = s.train.optimizer["no_decay_on_bias_and_norm"];
  resolved["train"]["optimizer"] = optim::optimizer_to_yaml(*s.optimizer, !split || split.as<bool>());
  resolved["train"]["scheduler"] = s.schedule->to_yaml();
  resolved["resolved"]["threads"] = num_threads();
  resolved["resolved"]["device"] = backends.device.str();
  resolved["resolved"]["backends"] = backends.enabled;
  if (!backends.note.empty()) resolved["resolved"]["fallback"] = backends.note;
  resolved["resolved"]["total_steps"] = s.plan.total_steps;
  resolved["resolved"]["world_size"] = s.world_size();
  if (!s.class_names.empty()) resolved["resolved"]["class_names"] = s.class_names;  // (predict, export)
  // The schedule as the config wrote it (its resolved form follows the run's length), so a resume
  // that extends training can compare the rest (extend_training).
  const YAML::Node train_node = cfg.node("train");
  resolved["resolved"]["scheduler_as_written"] =
      train_node && train_node["scheduler"] ? YAML::Clone(train_node["scheduler"]) : YAML::Node(YAML::NodeType::Null);
  if (options.resume) {
    check_resume_world_size(*s.run, s.world_size());
    if (check_resume_config(*s.run, resolved, s.out)) s.run->write_config(resolved);
  } else {
    s.run->write_config(resolved);
  }
  // What the datasets made before the folder existed (a trained tokenizer), which the config names.
  for (const data::RunFile& f : s.loaders.run_files)
    if (!std::filesystem::exists(s.run->path() / f.name)) io::atomic_write(s.run->path() / f.name, f.bytes);
  if (s.group != nullptr) s.group->comm().barrier();  // the folder is ready for the other ranks
  s.metrics = std::make_unique<MetricsLog>(s.run->metrics_path(), /*append=*/options.resume);
  s.position.rng = s.dropout_gen.state();
  if (!options.resume) return;
  const std::filesystem::path ck = restore_checkpoint(s);
  const int64_t dropped = s.metrics->truncate_after(s.position.step);
  s.out << fmt::format("resuming from {} (epoch {}, batch {}, step {}){}\n", ck.string(), s.position.epoch + 1,
                       s.position.batch, s.position.step,
                       dropped > 0 ? fmt::format("; {} later metrics lines dropped", dropped) : "");
}

void print_header(const PipelineState& s) {
  const Shape sample = s.loaders.train->dataset().sample_shape();
  s.out << fmt::format("run: {}  ({})\n", s.cfg.name(), s.run->path().string());
  const std::string validation =
      s.loaders.validation ? fmt::format("{} validation / ", s.loaders.validation->dataset().size()) : "";
  s.out << fmt::format("data: {} train / {}{} test samples of {}, batch {}, {} workers{}\n",
                       s.loaders.train->dataset().size(), validation, s.loaders.test->dataset().size(), sample.str(),
                       s.data.batch_size, s.data.workers,
                       s.loaders.train->dataset().streamed() ? ", streamed (each image decoded when it is read)" : "");
  s.out << fmt::format("model: {} parameters on {}\n", s.model->num_parameters(), s.model->device().str());
  s.out << fmt::format("train: {} epochs, {} steps ({} per epoch), optimizer {}, loss {}\n", s.plan.epochs,
                       s.plan.total_steps, s.plan.steps_per_epoch, s.optimizer->type(), s.train.loss.type);
  if (s.train.amp.enabled)
    s.out << fmt::format("amp: {} autocast (matmul and conv in {}, f32 weights and optimizer state), loss scaling {}\n",
                         amp::amp_dtype_name(s.train.amp.dtype), amp::amp_dtype_name(s.train.amp.dtype),
                         s.scaler->enabled() ? fmt::format("from {}", s.scaler->get_scale()) : std::string("off"));
  if (!s.checkpointing.empty()) s.out << fmt::format("checkpointing: {}\n", s.checkpointing);
  const Device device = s.model->device();
  const MemoryBudget& budget = s.memory_budget;
  s.out << fmt::format("memory: {}{}\n", s.memory.str(),
                       budget.available > 0
                           ? fmt::format("; {} available on {} ({})", format_memory_bytes(budget.available),
                                         device.str(), budget.bound_by)
                           : std::string());
  s.out.flush();
}

/// Runs the stages in order until one stops the pipeline; trainer callbacks hear each stage end. A
/// signal that arrived before a stage (during start-up, or during the stage before) stops there.
void run_stages(PipelineState& s) {
  // A pipeline that does not start by training (a model from init_from) measures it first, as
  // the row the others are compared with.
  if (s.report.stages && s.writes_files() && !s.stages.empty() && !s.stages.front()->trains())
    measure_stage(s, "start");
  // The stages poll (every step, and between stages): no grace deadline cuts short a checkpoint
  // being saved after a signal.
  const InterruptGuard stages("ingot: stopping after the current stage (press Ctrl-C again to stop now)\n");
  StageContext context(s);
  for (const auto& stage : s.stages) {
    if (interrupted()) {
      s.status = TrainStatus::Interrupted;
      s.exit_code = static_cast<int>(exit_code_for_signal(signal_number()));
      s.out << fmt::format("interrupted before the {} stage: stopped there\n", stage->name());
      return;
    }
    s.memory_watch->begin_stage(stage->name());
    const bool go_on = stage->run(context);
    s.memory_watch->end_stage();
    s.memory_watch->empty_caches();  // the next stage starts from what is live, the caches given back
    if (!go_on) return;
    // A stage other than train that changed the model leaves no evaluation of the new one.
    if (stage->changes_model() && !stage->trains()) s.forget_evaluation();
    if (s.report.stages && s.writes_files() && stage->changes_model()) measure_stage(s, stage->name());
    // (a stage may have replaced the model: the callbacks hear about the one there is now)
    TrainState ts{*s.model, *s.optimizer, s.position, s.position.epoch};
    for (const auto& cb : s.callbacks) cb->on_stage_end(ts, stage->name());
  }
}

/// The per-stage table, printed and written to compression.md (when any stage was measured).
void write_stage_table(const PipelineState& s) {
  if (s.stage_rows.empty()) return;
  const std::string table = stage_table_markdown(s.stage_rows);
  const std::filesystem::path file = s.run->path() / "compression.md";
  io::atomic_write(file, fmt::format("# {}: the model after each stage\n\nAccuracy, size and speed after every stage "
                                     "that changed the model; ratios against row 0. Latency at batch 1 and "
                                     "images/s with {} thread(s) on {}.\n\n{}",
                                     s.cfg.name(), num_threads(), s.model->device().str(), table));
  s.out << table << fmt::format("stage table: {}\n", file.string());
}

void write_summary(PipelineState& s, const config::BackendSelection& backends, double seconds) {
  Record summary("summary", s.position.epoch, s.position.step);
  summary.set("name", s.cfg.name())
      .set("status", s.status == TrainStatus::Finished      ? "completed"
                     : s.status == TrainStatus::Interrupted ? "interrupted"
                                                            : "failed")
      .set("epochs", s.plan.epochs)
      .set("total_steps", s.plan.total_steps)
      .set("train_loss", s.last_train_loss)
      .set("time_s", seconds)
      .set("threads", static_cast<int64_t>(num_threads()))
      .set("world_size", static_cast<int64_t>(s.world_size()))
      .set("device", s.model->device().str())
      .set("ops_by_backend", RawJson{ops_by_backend_json()})
      .set("backends", fmt::format("{}", fmt::join(backends.enabled, ",")))
      .set("parameters", s.model->num_parameters())
      .set("peak_host_bytes", s.memory_watch->run_peak(Device::cpu()));
  if (const Device d = s.model->device(); !d.is_cpu() && memory_stats_available(d))
    summary.set("peak_device_bytes", s.memory_watch->run_peak(d));
  if (!backends.note.empty()) summary.set("fallback", backends.note);
  if (s.train.amp.enabled) summary.set("amp", amp::amp_dtype_name(s.train.amp.dtype));
  if (s.scaler->enabled())
    summary.set("loss_scale", s.scaler->get_scale()).set("amp_skipped_steps", s.scaler->skipped_steps());
  if (s.last_eval) summary.set("test_accuracy", s.last_eval->accuracy).set("test_loss", s.last_eval->loss);
  if (s.selection && s.selection->best()) {
    summary.set("best_epoch", s.selection->best_epoch()).set("best_" + s.selection->metric(), *s.selection->best());
    if (s.writes_files()) summary.set("best_checkpoint", s.run->best_checkpoint().string() + ".safetensors");
  }
  if (s.stopped_early_at > 0) summary.set("stopped_early_at_epoch", s.stopped_early_at);
  if (!s.failure.empty()) summary.set("error", s.failure);
  s.run->write_summary(summary.to_json());
  s.metrics->log(summary);
  s.out << fmt::format("done in {:.1f} s: {}\n", seconds, s.run->summary_path().string());
}

/// The pipeline once this process has joined its group (if any): build, open the run, stages,
/// summary.
int run_joined(const config::Config& cfg, const config::BackendSelection& backends, const RunOptions& options,
               std::ostream& out, const parallel::ParallelConfig& parallel, Device device,
               parallel::ProcessGroup* group, std::chrono::steady_clock::time_point t_start, ConsoleTee& tee) {
  // Before anything is built: the "setup" stage's peak and, for the report, every tensor.
  auto watch = std::make_unique<MemoryWatch>(device, options.memory_report);
  const std::unique_ptr<PipelineState> state =
      build_pipeline(cfg, device, out, parallel, group, options.runs_dir / cfg.name());
  PipelineState& s = *state;
  s.memory_watch = std::move(watch);
  reset_op_counts();
  const LoggingConfig logging = parse_logging_config(cfg.node("logging"), cfg.file());
  open_run(s, backends, options);
  if (s.writes_files()) {  // console.log (from the output kept so far), metrics.csv, TensorBoard
    tee.attach(s.run->path() / "console.log", options.resume);
    attach_run_logs(*s.metrics, logging, s.run->path(),
                    options.resume ? std::optional<int64_t>(s.position.step) : std::nullopt);
  } else {
    tee.discard();
  }
  print_header(s);
  // Images are [C, H, W] with H, W > 1; a table row is [F, 1, 1] and an array sample anything else.
  const Shape sample = s.loaders.train->dataset().sample_shape();
  ProgressOptions progress;
  const bool tokens = s.loaders.train->dataset().input_dtype() == DType::I64;
  progress.unit = tokens ? "tok" : sample.size() == 3 && sample[1] > 1 && sample[2] > 1 ? "img" : "samples";
  s.progress = std::make_unique<ProgressBar>(out, is_terminal(stdout) && &out == &std::cout, progress);
  s.progress->watch_memory(s.memory_watch.get());
  s.metrics->watch_memory(s.memory_watch.get());
  const auto report = [&] {
    if (options.memory_report) write_memory_report(*s.memory_watch, s.cfg.name(), s.run->path() / "memory.md", out);
    const std::filesystem::path page = s.run->path() / "report.html";
    try {  // (a report that cannot be written does not fail the run)
      write_run_report({s.run->path()}, page);
      out << fmt::format("report: {}\n", page.string());
    } catch (const Error& e) {
      out << fmt::format("report: not written: {}\n", e.what());
    }
  };
  // A run that fails in a stage (out of memory, a full disk, ...) still leaves a summary saying so,
  // written if the disk takes it.
  const auto record_failure = [&](std::string failure) {
    s.status = TrainStatus::Failed;
    s.failure = std::move(failure);
    if (!s.writes_files()) return;
    try {
      write_summary(s, backends, std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count());
    } catch (const Error& e) {
      out << fmt::format("summary: not written: {}\n", e.what());
      return;
    }
    report();
  };
  try {
    run_stages(s);
  } catch (const OutOfMemoryError& e) {
    // The summary says what happened; the message says which lever matters for this run.
    record_failure(fmt::format("{} (this run's estimate: {}; {}; {})", e.what(), s.memory.str(), s.memory.advice(),
                               out_of_memory_levers(s.train, s.data.batch_size)));
    throw OutOfMemoryError(s.failure);
  } catch (const Error& e) {
    record_failure(e.what());
    throw;
  }
  if (s.writes_files()) {
    write_stage_table(s);
    write_summary(s, backends, std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count());
    report();
  }
  if (s.status == TrainStatus::Failed) throw NonFiniteError(s.failure);
  if (group != nullptr) group->finish();  // rank 0 serves the store: it leaves last
  return s.exit_code;
}

}  // namespace

std::string load_init_from(const config::Config& cfg, nn::Module& model) {
  if (!cfg.has("init_from")) return "";
  const InitFrom spec = parse_init_from(cfg.node("init_from"), cfg.file());
  try {
    return load_init_from(spec, model).line(spec.path);
  } catch (const Error& e) {
    throw InputError(fmt::format("{}: {}", cfg.where("init_from"), e.what()));
  }
}

nn::ModulePtr build_model_on(const config::Config& cfg, Device device, Generator& init_gen, Generator& dropout_gen,
                             std::string* init_report, const std::map<std::string, int64_t>& defaults) {
  YAML::Node node = cfg.node("model");
  if (!defaults.empty()) {
    node = YAML::Clone(node);
    for (const auto& [key, value] : defaults) node[key] = value;
  }
  const nn::ModulePtr model = nn::build_model(node, cfg.file(), init_gen, &dropout_gen);
  const std::string report = load_init_from(cfg, *model);
  if (init_report != nullptr) *init_report = report;
  model->to(device);  // before any optimizer, whose state follows its parameters
  return model;
}

bool is_pipeline(const config::Config& config) {
  return config.has("data") || config.has("model") || config.has("train") || config.has("stages");
}

int run_pipeline(const config::Config& cfg, const config::BackendSelection& backends, const RunOptions& options,
                 std::ostream& out) {
  const auto t_start = std::chrono::steady_clock::now();
  ConsoleTee tee(out);  // runs/<name>/console.log, once the run folder is open
  out << options.preamble << std::flush;
  const parallel::ParallelConfig parallel = parallel::parse_parallel_config(cfg.node("parallel"), cfg.file());
  Device device = backends.device;
  const std::unique_ptr<parallel::ProcessGroup> group = join_distributed_run(cfg, parallel, device, out);
  return run_as_rank(group.get(), [&] {
    return run_joined(cfg, backends, options, out, parallel, device, group.get(), t_start, tee);
  });
}

}  // namespace ingot::train
