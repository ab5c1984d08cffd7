// The distill stage: the teacher, the student, the scaled hard-label loss plus the callback's
// soft-target term, fine-tuning, and the swap of the pipeline's model.
#include "distill_stage.h"

#include <fmt/format.h>

#include <cmath>
#include <memory>

#include "distill_callback.h"
#include "ingot/base/error.h"
#include "ingot/nn/model_builder.h"
#include "ingot/train/fine_tune.h"
#include "kd_loss.h"

namespace ingot::distill {
namespace {

/// [1, sample...]: the probe of output_shape checks.
Shape batch_of_one(const Shape& sample) {
  Shape probe{1};
  for (int64_t d : sample) probe.push_back(d);
  return probe;
}

/// The student must take the data's samples and give as many outputs as the teacher.
void check_student(const DistillConfig& c, const nn::Module& student, const nn::Module& teacher, const Shape& sample) {
  const std::string at = fmt::format("{}: {}.student", config::where(c.file, c.student), c.path);
  if (const auto expected = nn::model_input_shape(c.student, c.file); expected && !(*expected == sample))
    throw ConfigError(
        fmt::format("{}: input_shape is {} but the data's samples are {}", at, expected->str(), sample.str()));
  const Shape probe = batch_of_one(sample);
  Shape out_student, out_teacher;
  try {
    out_student = student.output_shape(probe);
  } catch (const ShapeError& e) {
    throw ConfigError(
        fmt::format("{}: the student does not fit the data's samples {}: {}", at, sample.str(), e.what()));
  }
  try {
    out_teacher = teacher.output_shape(probe);
  } catch (const ShapeError& e) {
    throw ConfigError(
        fmt::format("{}: the teacher does not fit the data's samples {}: {}", c.teacher.where, sample.str(), e.what()));
  }
  if (!(out_student == out_teacher))
    throw ConfigError(
        fmt::format("{}: the student's outputs {} differ from the teacher's {}: give it as many "
                    "classes as the teacher",
                    at, out_student.str(), out_teacher.str()));
}

}  // namespace

config::Schema distill_schema() {
  config::Schema s;
  s.string("teacher", true).any("teacher_model").section("student", nn::model_schema(), true);
  s.number("temperature").number("alpha").section("fine_tune", train::fine_tune_schema());
  return s;
}

DistillConfig parse_distill_config(const YAML::Node& node, const std::string& file, const std::string& path) {
  DistillConfig c;
  c.file = file;
  c.path = path;
  if (const YAML::Node t = node["temperature"]) {
    c.temperature = t.as<double>();
    if (!(c.temperature > 0.0) || !std::isfinite(c.temperature))
      throw ConfigError(fmt::format("{}: {}.temperature must be a number > 0 (4 is usual), got {}",
                                    config::where(file, t), path, t.Scalar()));
  }
  if (const YAML::Node a = node["alpha"]) {
    c.alpha = a.as<double>();
    if (!(c.alpha >= 0.0 && c.alpha <= 1.0))
      throw ConfigError(
          fmt::format("{}: {}.alpha must be in [0, 1] (the weight of the teacher's term; 0 trains the "
                      "student alone), got {}",
                      config::where(file, a), path, a.Scalar()));
  }
  c.teacher = parse_teacher(node, file, path);
  if (!c.teacher.model.IsNull()) {
    Generator scratch(0);
    (void)nn::build_model(c.teacher.model, file, scratch);
  }
  c.student = node["student"];
  Generator scratch(0);
  (void)nn::build_model(c.student, file, scratch);
  if (const YAML::Node f = node["fine_tune"]) c.fine_tune = f;
  return c;
}

bool DistillStage::prepare_saved(nn::ModulePtr& model, const io::SafetensorsFile&) const {
  Generator scratch(0);  // (the weights come from the file)
  model = nn::build_model(config_.student, config_.file, scratch);
  return false;
}

bool DistillStage::run(train::StageContext& s) {
  const DistillConfig& c = config_;
  const Device device = s.model().device();
  const Teacher loaded = c.teacher.kind == TeacherKind::Current
                             ? Teacher{s.model_ptr(), "the pipeline's model"}
                             : load_teacher(c.teacher, s.config().node("model"), s.config().file());
  const nn::ModulePtr teacher = loaded.model;
  nn::ModulePtr student = nn::build_model(c.student, c.file, s.init_generator(), &s.dropout_generator());
  check_student(c, *student, *teacher, s.train_loader().dataset().sample_shape());
  freeze_teacher(*teacher, device);
  student->to(device);

  train::TrainConfig cfg = train::fine_tune_config(s, c.fine_tune);
  auto tap = std::make_shared<LossTap>();
  const nn::Loss plain_loss = cfg.loss;  // what the evaluations report
  cfg.loss = scaled_loss(cfg.loss, 1.0 - c.alpha, tap);
  const int64_t teacher_params = teacher->num_parameters(), student_params = student->num_parameters();
  s.set_note(fmt::format("student {} params from teacher {} params, T={:g}, alpha={:g}", student_params, teacher_params,
                         c.temperature, c.alpha));
  s.out() << fmt::format("distill: {} (teacher: {})\n", s.note(), loaded.source);
  DistillCallback callback(teacher, {.temperature = c.temperature, .alpha = c.alpha, .log_every = cfg.log_every}, tap,
                           &s.metrics());
  train::TrainStatus status;
  try {
    status = train::fine_tune(s, *student, cfg, {&callback}, name(), &plain_loss);
  } catch (const NonFiniteError& e) {
    s.fail(
        fmt::format("distill: {}; the pipeline's model is still the teacher, nothing was saved from the "
                    "student: lower the learning rate (fine_tune.optimizer.lr) and run again",
                    e.what()));
    return false;
  }
  if (status != train::TrainStatus::Finished) return false;  // (interrupted: the run says so)
  const DistillTerms t = callback.totals();
  if (c.alpha == 0.0)
    s.out() << fmt::format(
        "distill: done, the student alone: ce_loss {:.4f} (mean over {} batches; teacher ran 0 times)\n", t.ce_loss,
        t.batches);
  else
    s.out() << fmt::format(
        "distill: done, kd_loss {:.4f}  ce_loss {:.4f} (means over {} batches; teacher ran {} times)\n", t.kd_loss,
        t.ce_loss, t.batches, callback.teacher_forwards());
  train::Record r("distill_end", s.position().epoch, s.position().step);
  r.set("kd_loss", t.kd_loss).set("ce_loss", t.ce_loss).set("temperature", c.temperature).set("alpha", c.alpha);
  r.set("student_parameters", student_params).set("teacher_parameters", teacher_params);
  s.metrics().log(r);
  // The student replaces the model; the teacher goes with the last reference to it. An evaluation
  // of the teacher no longer describes the pipeline's model.
  s.replace_model(std::move(student));
  return true;
}

}  // namespace ingot::distill
