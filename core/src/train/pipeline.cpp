// The pipeline runner: wiring of config sections to data, model, optimizer, schedule, trainer
// and run folder.
#include "ingot/train/pipeline.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <iostream>
#include <sstream>

#include "ingot/data/data_config.h"
#include "ingot/io/safetensors.h"
#include "ingot/nn/model_builder.h"
#include "ingot/optim/lr_schedule.h"
#include "ingot/optim/optimizer_config.h"
#include "ingot/runtime/allocator.h"
#include "ingot/runtime/device_memory.h"
#include "ingot/runtime/op_counts.h"
#include "ingot/runtime/threads.h"
#include "ingot/train/checkpoint.h"
#include "ingot/train/evaluate.h"
#include "ingot/train/interrupt.h"
#include "ingot/train/run_dir.h"
#include "ingot/train/trainer.h"

namespace ingot::train {

namespace {

/// A stream of its own for dropout masks, so the weights' initial values do not depend on it.
constexpr uint64_t kDropoutStream = 0x9E3779B97F4A7C15ull;

std::vector<std::string> class_names_for(const data::DataConfig& dc, int64_t classes) {
  if (dc.dataset == "fashion_mnist" && classes == static_cast<int64_t>(kFashionMnistClasses.size()))
    return {kFashionMnistClasses.begin(), kFashionMnistClasses.end()};
  return {};
}

std::string eval_line(const EvalResult& r) {
  return fmt::format("evaluate: {} samples  accuracy {:.2f}%  loss {:.4f}  ({:.1f} s)", r.samples, 100.0 * r.accuracy,
                     r.loss, r.seconds);
}

Record eval_record(const EvalResult& r, int64_t epoch, int64_t step) {
  Record rec("eval", epoch, step);
  rec.set("loss", r.loss).set("accuracy", r.accuracy).set("samples", r.samples).set("time_s", r.seconds);
  rec.set("confusion", RawJson{r.confusion.to_json()});
  return rec;
}

/// `node` as config.resolved.yaml holds it, without the `resolved:` block (threads, device and
/// backends may change between a run and its resume; the rest may not).
std::vector<std::string> config_lines(YAML::Node node) {
  node.remove("resolved");
  YAML::Emitter e;
  e << node;
  std::vector<std::string> lines;
  std::istringstream in(e.c_str());
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

/// A resume must use the config the run started with: refuses any other change, warns about
/// a thread count or device that differs (results then differ from an uninterrupted run).
void check_resume_config(const RunDir& run, const YAML::Node& now, std::ostream& out) {
  YAML::Node before;
  try {
    before = YAML::LoadFile(run.config_path().string());
  } catch (const YAML::Exception& e) {
    throw InputError(fmt::format("{}: cannot read the run's config ({}): start over with --force",
                                 run.config_path().string(), e.what()));
  }
  const std::vector<std::string> a = config_lines(YAML::Clone(before)), b = config_lines(YAML::Clone(now));
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    const std::string x = i < a.size() ? a[i] : "", y = i < b.size() ? b[i] : "";
    if (x != y)
      throw InputError(fmt::format("{}: the config changed since the run started (resolved line {}: '{}' is now "
                                   "'{}'): resume with the same config, or start over with --force",
                                   run.path().string(), i + 1, x, y));
  }
  YAML::Emitter was, is;
  was << before["resolved"];
  is << now["resolved"];
  if (std::string(was.c_str()) != std::string(is.c_str()))
    out << fmt::format("warning: resuming with different threads or backends than the run started with; losses "
                       "will not match an uninterrupted run bit for bit\n");
}

}  // namespace

void load_init_from(const config::Config& cfg, nn::Module& model) {
  if (!cfg.has("init_from")) return;
  const std::string path = cfg.get_string("init_from", "");
  io::SafetensorsFile weights = io::load_safetensors(path);
  try {
    model.load_state_dict(weights.tensors, /*strict=*/true);
  } catch (const Error& e) {
    throw InputError(fmt::format("{}: init_from {}: {}", cfg.where("init_from"), path, e.what()));
  }
}

bool is_pipeline(const config::Config& config) {
  return config.has("data") || config.has("model") || config.has("train") || config.has("stages");
}

int run_pipeline(const config::Config& cfg, const config::BackendSelection& backends, const RunOptions& options,
                 std::ostream& out) {
  const auto t_start = std::chrono::steady_clock::now();
  const std::string& file = cfg.file();
  const std::vector<Stage> stages = parse_stages(cfg.node("stages"), file);
  const bool training = std::find(stages.begin(), stages.end(), Stage::Train) != stages.end();
  const uint64_t seed = static_cast<uint64_t>(cfg.seed().value_or(0));
  if (!cfg.has("model")) throw ConfigError(fmt::format("{}: the pipeline needs a model: section", file));

  // Everything that can be refused is checked before the run folder is touched.
  const data::DataConfig data_cfg = data::parse_data_config(cfg.node("data"), file);
  const TrainConfig train_cfg = parse_train_config(cfg.node("train"), file);
  Generator init_gen(seed);
  Generator dropout_gen(seed ^ kDropoutStream);
  const nn::ModulePtr model = nn::build_model(cfg.node("model"), file, init_gen, &dropout_gen);
  data::DataLoaders loaders = data::make_data_loaders(data_cfg, seed);
  const Shape sample = loaders.train->dataset().sample_shape();
  if (const auto expected = nn::model_input_shape(cfg.node("model"), file); expected && !(*expected == sample))
    throw ConfigError(fmt::format("{}: model.input_shape is {} but the data's samples are {}", cfg.where("model"),
                                  expected->str(), sample.str()));
  Shape probe{1};
  for (int64_t d : sample) probe.push_back(d);
  try {
    (void)model->output_shape(probe);  // shape errors between data and model, before any work
  } catch (const ShapeError& e) {
    throw ConfigError(fmt::format("{}: the model does not fit the data's samples {}: {}", cfg.where("model"),
                                  sample.str(), e.what()));
  }

  load_init_from(cfg, *model);
  model->to(backends.device);  // before the optimizer, whose state follows its parameters
  reset_op_counts();
  const auto named = model->named_parameters();
  std::unique_ptr<optim::Optimizer> optimizer = optim::make_optimizer(train_cfg.optimizer, named, file);
  const TrainPlan plan = make_train_plan(train_cfg, loaders.train->num_batches());
  const std::unique_ptr<optim::LrSchedule> schedule = optim::make_schedule(train_cfg.scheduler, file, plan.total_steps);

  RunDir run = RunDir::open(cfg.name(), run_dir_mode(options.resume, options.force), options.runs_dir);
  if (run.moved_aside()) out << fmt::format("previous run moved to {}\n", run.moved_aside()->string());
  {
    YAML::Node resolved = YAML::Clone(cfg.root());
    resolved["data"] = data::data_config_yaml(data_cfg);
    resolved["train"]["loss"] = train_cfg.loss.resolved;
    const YAML::Node split = train_cfg.optimizer["no_decay_on_bias_and_norm"];
    resolved["train"]["optimizer"] = optim::optimizer_to_yaml(*optimizer, !split || split.as<bool>());
    resolved["train"]["scheduler"] = schedule->to_yaml();
    resolved["resolved"]["threads"] = num_threads();
    resolved["resolved"]["device"] = backends.device.str();
    resolved["resolved"]["backends"] = backends.enabled;
    if (!backends.note.empty()) resolved["resolved"]["fallback"] = backends.note;
    resolved["resolved"]["total_steps"] = plan.total_steps;
    if (options.resume) {
      check_resume_config(run, resolved, out);
    } else {
      run.write_config(resolved);
    }
  }
  MetricsLog metrics(run.metrics_path(), /*append=*/options.resume);

  TrainPosition position;
  position.rng = dropout_gen.state();
  if (options.resume) {
    const auto stem = run.latest_checkpoint();
    if (!stem) throw InputError(fmt::format("{}: no checkpoint to resume from: run without --resume", run.path().string()));
    const std::filesystem::path ck = stem->string() + ".safetensors";
    Checkpoint c = load_checkpoint(ck);
    model->load_state_dict(c.model, /*strict=*/true);
    optimizer->load_state_dict(c.optimizer);
    position = c.position;
    dropout_gen.set_state(position.rng);
    const int64_t dropped = metrics.truncate_after(position.step);
    out << fmt::format("resuming from {} (epoch {}, batch {}, step {}){}\n", ck.string(), position.epoch + 1,
                       position.batch, position.step,
                       dropped > 0 ? fmt::format("; {} later metrics lines dropped", dropped) : "");
  }

  out << fmt::format("run: {}  ({})\n", cfg.name(), run.path().string());
  out << fmt::format("data: {} train / {} test samples of {}, batch {}, {} workers\n", loaders.train->dataset().size(),
                     loaders.test->dataset().size(), sample.str(), data_cfg.batch_size, data_cfg.workers);
  out << fmt::format("model: {} parameters\n", model->num_parameters());
  out << fmt::format("train: {} epochs, {} steps ({} per epoch), optimizer {}\n", plan.epochs, plan.total_steps,
                     plan.steps_per_epoch, optimizer->type());
  out.flush();

  const std::vector<std::string> names = class_names_for(data_cfg, loaders.test->dataset().num_classes());
  ProgressBar bar(out, is_terminal(stdout) && &out == &std::cout);
  std::optional<EvalResult> last_eval;
  double last_train_loss = std::nan("");
  TrainStatus status = TrainStatus::Finished;
  int exit_code = 0;
  const auto save_at = [&](const std::filesystem::path& stem, const TrainPosition& pos) {
    Checkpoint c{pos, model->state_dict(), optimizer->state_dict()};
    save_checkpoint(stem.string() + ".safetensors", c);
    run.set_latest_checkpoint(stem);
  };

  if (training) {
    InterruptGuard guard("\ningot: stopping after the current step to save a checkpoint (Ctrl-C again stops now)\n");
    TrainContext ctx{model.get(), optimizer.get(), schedule.get(), loaders.train.get(), &dropout_gen, &metrics, &bar,
                     data_cfg.prefetch};
    const EpochEnd on_epoch_end = [&](int64_t epoch, const TrainPosition& pos, double loss) {
      last_train_loss = loss;
      if (train_cfg.eval_every_epoch && pos.batch == 0) {
        last_eval = evaluate(*model, *loaders.test, names, &train_cfg.loss);
        bar.message(eval_line(*last_eval));
        metrics.log(eval_record(*last_eval, epoch, pos.step));
      }
      const bool last = pos.epoch >= plan.epochs || pos.step >= plan.total_steps;
      if (last || epoch % train_cfg.checkpoint_every == 0) save_at(run.epoch_checkpoint(epoch), pos);
    };
    status = train_loop(ctx, train_cfg, plan, position, on_epoch_end);
    if (status == TrainStatus::Interrupted) {
      save_at(run.step_checkpoint(position.step), position);
      exit_code = static_cast<int>(exit_code_for_signal(signal_number()));
      out << fmt::format("interrupted at step {}: checkpoint saved; continue with: ingot run {} --resume\n",
                         position.step, file);
    }
  }

  if (status == TrainStatus::Finished) {
    for (Stage s : stages) {
      if (s == Stage::Evaluate) {
        if (!last_eval || !training) last_eval = evaluate(*model, *loaders.test, names, &train_cfg.loss);
        out << eval_line(*last_eval) << "\n" << last_eval->confusion.table() << "\n";
        metrics.log(eval_record(*last_eval, position.epoch, position.step));
      } else if (s == Stage::Save) {
        const std::filesystem::path weights = run.path() / "model.safetensors";
        const nn::StateDict sd = model->state_dict();
        io::save_safetensors(weights, sd, io::Metadata{{"format", "pt"}});
        out << fmt::format("save: weights in {} (torch.nn state_dict names)\n", weights.string());
      }
    }
  }

  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  Record summary("summary", position.epoch, position.step);
  summary.set("name", cfg.name())
      .set("status", status == TrainStatus::Finished ? "completed" : "interrupted")
      .set("epochs", plan.epochs)
      .set("total_steps", plan.total_steps)
      .set("train_loss", last_train_loss)
      .set("time_s", seconds)
      .set("threads", static_cast<int64_t>(num_threads()))
      .set("device", model->device().str())
      .set("ops_by_backend", RawJson{ops_by_backend_json()})
      .set("backends", fmt::format("{}", fmt::join(backends.enabled, ",")))
      .set("parameters", model->num_parameters())
      .set("peak_host_bytes", host_allocator().stats().peak_allocated);
  if (!model->device().is_cpu()) summary.set("peak_device_bytes", memory_stats(model->device()).peak_allocated);
  if (!backends.note.empty()) summary.set("fallback", backends.note);
  if (last_eval) summary.set("test_accuracy", last_eval->accuracy).set("test_loss", last_eval->loss);
  run.write_summary(summary.to_json());
  metrics.log(summary);
  out << fmt::format("done in {:.1f} s: {}\n", seconds, run.summary_path().string());
  return exit_code;
}

}  // namespace ingot::train
