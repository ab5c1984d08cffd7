// The distill stage: its keys (refused with clear errors), the teacher from a run folder (saved
// weights or newest checkpoint) and from a file, the student checked against data and teacher,
// and a whole stage on a small pipeline (teacher untouched, student in its place, both terms logged).
#include <catch2/catch.hpp>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "../train/temp_dir.h"
#include "distill_stage.h"
#include "ingot/data/data_config.h"
#include "ingot/io/safetensors.h"
#include "ingot/nn/model_builder.h"
#include "ingot/train/checkpoint.h"
#include "ingot/train/pipeline.h"
#include "ingot/train/pipeline_schema.h"
#include "ingot/train/stage_harness.h"
#include "teacher.h"

namespace {

using ingot::Tensor;
namespace distill = ingot::distill;
namespace fs = std::filesystem;

constexpr const char* kTeacherModel = "{preset: simple_cnn, input_shape: [1, 8, 8], width: 4, hidden: 16, classes: 4}";
constexpr const char* kStudentModel = "{preset: mlp, input_shape: [1, 8, 8], sizes: [64, 8, 4]}";

/// A pipeline config over 8x8 synthetic images of 4 classes, with the teacher as its model.
std::string pipeline_yaml(const std::string& train = "{epochs: 1, log_every: 1, optimizer: {type: sgd, lr: 0.05}}") {
  return std::string("name: distill_test\nseed: 3\nthreads: 1\n") +
         "data: {dataset: synthetic, batch_size: 16, eval_batch_size: 32, workers: 0,\n"
         "       synthetic: {size: 64, test_size: 32, channels: 1, height: 8, width: 8, classes: 4}}\n" +
         "model: " + kTeacherModel + "\ntrain: " + train + "\n";
}

/// The stage's map as the registry hands it over (keys validated), parsed.
distill::DistillConfig parse_stage(const std::string& yaml) {
  const YAML::Node node = YAML::Load(yaml);
  distill::distill_schema().validate(node, "stage.yaml", "stages[1]");
  return distill::parse_distill_config(node, "stage.yaml", "stages[1]");
}

/// What `ingot run` builds before its stages run, on the host, with metrics in a temporary folder.
struct SmallPipeline {
  ingot::test::TempDir dir;
  std::ostringstream out;
  ingot::config::Config cfg;
  ingot::train::StageHarness harness;
  ingot::train::StageContext& s;

  explicit SmallPipeline(const std::string& yaml = pipeline_yaml())
      : cfg(ingot::config::Config::parse(yaml, ingot::train::pipeline_schema(), "pipeline.yaml")),
        harness(cfg, out, dir.path() / "metrics.jsonl"),
        s(harness.context()) {}
};

ingot::nn::ModulePtr make_model(const char* yaml, uint64_t seed) {
  ingot::Generator gen(seed);
  return ingot::nn::build_model(YAML::Load(yaml), "test", gen);
}

/// Every parameter and buffer, copied.
std::map<std::string, std::vector<float>> snapshot(const ingot::nn::Module& m) {
  std::map<std::string, std::vector<float>> out;
  for (const auto& [name, t] : m.state_dict()) out[name] = t.to(ingot::DType::F32).to_vector<float>();
  return out;
}

void write_file(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

}  // namespace

TEST_CASE("distill keys out of range or misplaced are refused with the line and what to do") {
  const ingot::test::TempDir dir;
  const std::string weights = (dir.path() / "t.safetensors").string();
  ingot::io::save_safetensors(weights, make_model(kTeacherModel, 1)->state_dict());
  const std::string student = std::string("student: ") + kStudentModel + "\n";
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"teacher: current\ntemperature: 0\n", "temperature must be a number > 0"},
      {"teacher: current\ntemperature: -2\n", "temperature must be a number > 0"},
      {"teacher: current\nalpha: 1.5\n", "alpha must be in [0, 1]"},
      {"teacher: current\nalpha: -0.1\n", "alpha must be in [0, 1]"},
      {"teacher: current\ntemprature: 4\n", "did you mean 'temperature'"},
      {"teacher: runs/no_such_run\n", "is neither current, a run folder nor an existing .safetensors file"},
      {"teacher: no_such.safetensors\n", "no_such.safetensors does not exist"},
      {std::string("teacher: current\nteacher_model: ") + kTeacherModel + "\n",
       "teacher_model applies to a .safetensors"},
      {"teacher: " + weights + "\nteacher_model: {preset: mlp, sizes: [64, 4], widht: 2}\n", "widht"},
      {"teacher: current\nfine_tune: {epoch: 2}\n", "did you mean 'epochs'"},
  };
  for (const auto& [keys, message] : bad) {
    INFO(keys);
    try {
      parse_stage(keys + student);
      FAIL("accepted");
    } catch (const ingot::ConfigError& e) {
      CHECK_THAT(e.what(), Catch::Contains(message));
      CHECK_THAT(e.what(), Catch::Contains("stage.yaml:"));
    }
  }
  CHECK_THROWS_WITH(parse_stage("teacher: current\n"), Catch::Contains("student"));
  CHECK_THROWS_WITH(parse_stage("teacher: current\nstudent: {preset: mlp, sizes: [64, 4], widht: 2}\n"),
                    Catch::Contains("widht"));
  const distill::DistillConfig ok = parse_stage("teacher: current\n" + student);
  CHECK(ok.temperature == 4.0);
  CHECK(ok.alpha == 0.9);
  CHECK(ok.teacher.kind == distill::TeacherKind::Current);
}

TEST_CASE("a teacher loads from a run folder's model.safetensors, else from its newest checkpoint") {
  const ingot::test::TempDir dir;
  const fs::path run = dir.path() / "runs" / "teacher";
  fs::create_directories(run / "checkpoints");
  write_file(run / "config.resolved.yaml", std::string("name: teacher\nmodel: ") + kTeacherModel + "\n");
  const auto older = make_model(kTeacherModel, 11), newer = make_model(kTeacherModel, 12),
             saved = make_model(kTeacherModel, 13);
  ingot::train::save_checkpoint(run / "checkpoints" / "epoch-001.safetensors", {{}, older->state_dict(), {}, {}});
  ingot::train::save_checkpoint(run / "checkpoints" / "epoch-002.safetensors", {{}, newer->state_dict(), {}, {}});
  write_file(run / "checkpoints" / "latest", "epoch-002\n");
  const std::string stage = "teacher: " + run.string() + "\nstudent: " + kStudentModel + "\n";
  const distill::DistillConfig c = parse_stage(stage);
  REQUIRE(c.teacher.kind == distill::TeacherKind::RunFolder);
  // Without model.safetensors: the checkpoint `latest` names.
  distill::Teacher t = distill::load_teacher(c.teacher, YAML::Node(), "p.yaml");
  CHECK(snapshot(*t.model) == snapshot(*newer));
  CHECK_THAT(t.source, Catch::EndsWith("epoch-002.safetensors"));
  // With it: the saved weights.
  ingot::io::save_safetensors(run / "model.safetensors", saved->state_dict());
  t = distill::load_teacher(c.teacher, YAML::Node(), "p.yaml");
  CHECK(snapshot(*t.model) == snapshot(*saved));
  CHECK_THAT(t.source, Catch::EndsWith("model.safetensors"));
  // A model.safetensors that a later stage changed (a distilled student): the checkpoint again.
  ingot::io::save_safetensors(run / "model.safetensors", make_model(kStudentModel, 14)->state_dict());
  CHECK(snapshot(*distill::load_teacher(c.teacher, YAML::Node(), "p.yaml").model) == snapshot(*newer));
  // Nothing fits: every file tried is named.
  fs::remove_all(run / "checkpoints");
  CHECK_THROWS_WITH(distill::load_teacher(c.teacher, YAML::Node(), "p.yaml"),
                    Catch::Contains("model.safetensors: load_state_dict") && Catch::Contains("stage.yaml:1"));
  // A folder that is no run is refused when the stage is read.
  CHECK_THROWS_WITH(parse_stage("teacher: " + dir.path().string() + "\nstudent: " + kStudentModel + "\n"),
                    Catch::Contains("no config.resolved.yaml"));
}

TEST_CASE("a teacher loads from a .safetensors file with teacher_model or the pipeline's model") {
  const ingot::test::TempDir dir;
  const auto model = make_model(kTeacherModel, 21);
  const fs::path file = dir.path() / "teacher.safetensors";
  ingot::io::save_safetensors(file, model->state_dict());
  const std::string student = std::string("student: ") + kStudentModel + "\n";

  const distill::DistillConfig with_model =
      parse_stage("teacher: " + file.string() + "\nteacher_model: " + kTeacherModel + "\n" + student);
  REQUIRE(with_model.teacher.kind == distill::TeacherKind::File);
  CHECK(snapshot(*distill::load_teacher(with_model.teacher, YAML::Node(), "p.yaml").model) == snapshot(*model));

  const distill::DistillConfig plain = parse_stage("teacher: " + file.string() + "\n" + student);
  CHECK(snapshot(*distill::load_teacher(plain.teacher, YAML::Load(kTeacherModel), "p.yaml").model) == snapshot(*model));

  // An Ingot checkpoint file: its model tensors.
  const fs::path ck = dir.path() / "epoch-001.safetensors";
  ingot::train::save_checkpoint(ck, {{}, model->state_dict(), {}, {}});
  const distill::DistillConfig from_ck = parse_stage("teacher: " + ck.string() + "\n" + student);
  CHECK(snapshot(*distill::load_teacher(from_ck.teacher, YAML::Load(kTeacherModel), "p.yaml").model) ==
        snapshot(*model));

  // Weights that do not fit the architecture: the file and the stage's line are named.
  try {
    distill::load_teacher(plain.teacher, YAML::Load(kStudentModel), "p.yaml");
    FAIL("accepted");
  } catch (const ingot::InputError& e) {
    CHECK_THAT(e.what(), Catch::Contains("teacher.safetensors"));
    CHECK_THAT(e.what(), Catch::Contains("stage.yaml:1"));
  }
}

TEST_CASE("the distill stage leaves the teacher bit-identical and puts the student in the model's place") {
  SmallPipeline p;
  const ingot::nn::ModulePtr teacher = p.s.model_ptr();
  const auto before = snapshot(*teacher);
  distill::DistillStage stage(parse_stage(std::string("teacher: current\ntemperature: 2\nalpha: 0.5\nstudent: ") +
                                          kStudentModel + "\nfine_tune: {steps: 3}\n"));
  CHECK(stage.changes_model());
  // An evaluation of the teacher, which the student must not inherit.
  const auto evaluate = ingot::train::stage_registry().make(YAML::Node("evaluate"), "test", "stages[0]");
  REQUIRE(p.harness.run(*evaluate));
  REQUIRE(p.s.last_evaluation() != nullptr);
  REQUIRE(p.harness.run(stage));

  CHECK(snapshot(*teacher) == before);
  for (const Tensor& t : teacher->parameters()) {
    CHECK_FALSE(t.requires_grad());
    CHECK_FALSE(t.grad().defined());
  }
  // The pipeline's model is the student, trained (its weights moved from the initial ones).
  REQUIRE(p.s.model_ptr() != teacher);
  const auto params = p.s.model().named_parameters();
  REQUIRE(params.size() == 4);
  CHECK(params[0].second.shape() == ingot::Shape({8, 64}));
  CHECK(params[2].second.shape() == ingot::Shape({4, 8}));
  CHECK(p.s.note() ==
        fmt::format("student 556 params from teacher {} params, T=2, alpha=0.5", teacher->num_parameters()));
  CHECK(p.s.last_evaluation() == nullptr);
  // Both terms, every step (log_every 1), and the stage's end record.
  const std::string metrics = ingot::test::read_text(p.dir.path() / "metrics.jsonl");
  size_t records = 0;
  for (size_t at = metrics.find("\"event\":\"distill\""); at != std::string::npos;
       at = metrics.find("\"event\":\"distill\"", at + 1))
    ++records;
  CHECK(records == 3);
  CHECK_THAT(metrics, Catch::Contains("\"kd_loss\":"));
  CHECK_THAT(metrics, Catch::Contains("\"ce_loss\":"));
  CHECK_THAT(metrics, Catch::Contains("\"event\":\"distill_end\""));
  CHECK_THAT(p.out.str(), Catch::Contains("distill: done, kd_loss"));
}

TEST_CASE("a student that does not fit the data or gives other outputs than the teacher is refused") {
  SmallPipeline p;
  distill::DistillStage classes(
      parse_stage("teacher: current\nstudent: {preset: mlp, input_shape: [1, 8, 8], sizes: [64, 8, 3]}\n"));
  CHECK_THROWS_WITH(p.harness.run(classes), Catch::Contains("differ from the teacher's"));
  distill::DistillStage input(
      parse_stage("teacher: current\nstudent: {preset: mlp, input_shape: [1, 4, 4], sizes: [16, 8, 4]}\n"));
  CHECK_THROWS_WITH(p.harness.run(input), Catch::Contains("input_shape is [1, 4, 4]"));
}
