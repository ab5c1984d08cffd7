// RunDir: refusal without --resume / --force, --force keeps the old run aside, --resume needs a
// checkpoint, the latest-checkpoint pointer, and the files written into the folder.
#include <catch2/catch.hpp>

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <string>
#include <vector>

#include "ingot/base/error.h"
#include "ingot/train/run_dir.h"
#include "temp_dir.h"

namespace fs = std::filesystem;
using ingot::train::RunDir;
using ingot::train::RunDirMode;

namespace {

template <class E, class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "<no exception>";
}

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

TEST_CASE("RunDir: creates the folder and refuses to reuse it", "[train][run_dir]") {
  ingot::test::TempDir tmp;
  const fs::path base = tmp.path() / "runs";  // created on demand
  const RunDir run = RunDir::open("foo", RunDirMode::Create, base);
  CHECK(run.path() == base / "foo");
  CHECK(fs::is_directory(run.checkpoints_dir()));
  CHECK(run.config_path() == base / "foo" / "config.resolved.yaml");
  CHECK(run.metrics_path() == base / "foo" / "metrics.jsonl");
  CHECK(run.summary_path() == base / "foo" / "summary.json");
  CHECK(run.epoch_checkpoint(3) == base / "foo" / "checkpoints" / "epoch-003");
  CHECK(run.step_checkpoint(1234) == base / "foo" / "checkpoints" / "step-00001234");
  CHECK_FALSE(run.latest_checkpoint().has_value());

  const std::string msg = message_of<ingot::InputError>([&] { RunDir::open("foo", RunDirMode::Create, base); });
  CHECK(msg == (base / "foo").string() + " already exists: pass --resume to continue it or --force to replace it");
  CHECK(ingot::InputError("x").exit_code() == ingot::ExitCode::Usage);
}

TEST_CASE("RunDir: --force moves the old run aside, losing nothing", "[train][run_dir]") {
  ingot::test::TempDir tmp;
  const fs::path base = tmp.path();
  const RunDir old_run = RunDir::open("foo", RunDirMode::Create, base);
  ingot::test::write_text(old_run.metrics_path(), "{\"step\":1}\n");

  const RunDir run = RunDir::open("foo", RunDirMode::Force, base);
  REQUIRE(run.moved_aside().has_value());
  const fs::path aside = *run.moved_aside();
  CHECK(aside.parent_path() == base);
  CHECK(aside.filename().string().rfind("foo.old-", 0) == 0);
  CHECK(ingot::test::read_text(aside / "metrics.jsonl") == "{\"step\":1}\n");
  CHECK(names_in(run.path()) == std::vector<std::string>{"checkpoints"});

  // A second --force within the same second picks another name and keeps both old runs.
  const RunDir again = RunDir::open("foo", RunDirMode::Force, base);
  REQUIRE(again.moved_aside().has_value());
  CHECK(*again.moved_aside() != aside);
  CHECK(fs::exists(aside / "metrics.jsonl"));
  CHECK(names_in(base).size() == 3);

  // --force on a fresh name simply creates it.
  const RunDir fresh = RunDir::open("bar", RunDirMode::Force, base);
  CHECK_FALSE(fresh.moved_aside().has_value());
  CHECK(fs::is_directory(fresh.path()));
}

TEST_CASE("RunDir: --resume needs the folder and a complete checkpoint", "[train][run_dir]") {
  ingot::test::TempDir tmp;
  const fs::path base = tmp.path();
  CHECK(message_of<ingot::InputError>([&] { RunDir::open("foo", RunDirMode::Resume, base); }).find("does not exist") !=
        std::string::npos);

  const RunDir run = RunDir::open("foo", RunDirMode::Create, base);
  const std::string no_ckpt = message_of<ingot::InputError>([&] { RunDir::open("foo", RunDirMode::Resume, base); });
  CHECK(no_ckpt.find("no checkpoint to resume from") != std::string::npos);
  CHECK(no_ckpt.find("--force") != std::string::npos);

  const fs::path stem = run.epoch_checkpoint(2);
  ingot::test::write_text(fs::path(stem).concat(".safetensors"), "weights");
  run.set_latest_checkpoint(stem);
  CHECK(ingot::test::read_text(run.latest_pointer_path()) == "epoch-002\n");
  const RunDir resumed = RunDir::open("foo", RunDirMode::Resume, base);
  CHECK(resumed.mode() == RunDirMode::Resume);
  REQUIRE(resumed.latest_checkpoint().has_value());
  CHECK(*resumed.latest_checkpoint() == stem);
  CHECK(ingot::test::read_text(fs::path(stem).concat(".safetensors")) == "weights");  // resume touches nothing

  // A pointer naming missing files, or garbage, is refused with the pointer's path.
  run.set_latest_checkpoint(run.epoch_checkpoint(3));
  CHECK(message_of<ingot::InputError>([&] { (void)run.latest_checkpoint(); }).find("epoch-003") != std::string::npos);
  ingot::test::write_text(run.latest_pointer_path(), "../../etc/passwd\n");
  CHECK(message_of<ingot::InputError>([&] {
          (void)run.latest_checkpoint();
        }).find(run.latest_pointer_path().string()) != std::string::npos);
  // A bad pointer does not refuse the resume while a checkpoint file is there: the pipeline falls
  // back to the newest one that verifies (checkpoint_stems).
  CHECK_NOTHROW(RunDir::open("foo", RunDirMode::Resume, base));
  CHECK(run.checkpoint_stems() == std::vector<fs::path>{stem});
  CHECK_THROWS_AS(run.set_latest_checkpoint(tmp.path() / "elsewhere"), ingot::Error);
}

TEST_CASE("RunDir: flags and names", "[train][run_dir]") {
  using ingot::train::run_dir_mode;
  CHECK(run_dir_mode(false, false) == RunDirMode::Create);
  CHECK(run_dir_mode(true, false) == RunDirMode::Resume);
  CHECK(run_dir_mode(false, true) == RunDirMode::Force);
  CHECK_THROWS_AS(run_dir_mode(true, true), ingot::ConfigError);

  ingot::test::TempDir tmp;
  for (const char* bad : {"", "..", ".hidden", "a/b", "a b", "../up"}) {
    INFO(bad);
    CHECK_THROWS_AS(RunDir::open(bad, RunDirMode::Create, tmp.path()), ingot::ConfigError);
  }
  CHECK(names_in(tmp.path()).empty());
  CHECK_NOTHROW(RunDir::open("fashion_mnist-cnn.v2", RunDirMode::Create, tmp.path()));
}

TEST_CASE("RunDir: resolved config and summary are written whole", "[train][run_dir]") {
  ingot::test::TempDir tmp;
  const RunDir run = RunDir::open("foo", RunDirMode::Create, tmp.path());
  const YAML::Node config =
      YAML::Load("name: foo\nseed: 7\ntrain:\n  epochs: 3\n  optimizer: {type: adamw, lr: 0.001}\n");
  run.write_config(config);
  const YAML::Node back = YAML::LoadFile(run.config_path().string());
  CHECK(back["name"].as<std::string>() == "foo");
  CHECK(back["seed"].as<int>() == 7);
  CHECK(back["train"]["optimizer"]["lr"].as<double>() == 0.001);

  run.write_summary("{\"accuracy\":0.9}");
  run.write_summary("{\"accuracy\":0.91}");
  CHECK(ingot::test::read_text(run.summary_path()) == "{\"accuracy\":0.91}");
  CHECK(names_in(run.path()) ==
        std::vector<std::string>{".lock", "checkpoints", "config.resolved.yaml", "summary.json"});
}

TEST_CASE("RunDir: old checkpoints of a kind are deleted but the newest and the latest", "[train][run_dir]") {
  ingot::test::TempDir tmp;
  const RunDir run = RunDir::open("foo", RunDirMode::Create, tmp.path());
  for (int64_t e : {1, 2, 3, 4}) ingot::test::write_text(fs::path(run.epoch_checkpoint(e)).concat(".safetensors"), "e");
  for (int64_t s : {5, 10, 150, 1200})
    ingot::test::write_text(fs::path(run.step_checkpoint(s)).concat(".safetensors"), "s");
  ingot::test::write_text(run.checkpoints_dir() / "step-00000001.safetensors.tmp-123", "partial");
  run.set_latest_checkpoint(run.epoch_checkpoint(1));  // the pointer's checkpoint is never deleted

  CHECK(run.remove_old_checkpoints("step", 0).empty());  // 0 keeps all
  const auto steps = run.remove_old_checkpoints("step", 2);
  CHECK(steps == std::vector<fs::path>{run.step_checkpoint(5), run.step_checkpoint(10)});
  const auto epochs = run.remove_old_checkpoints("epoch", 2);
  CHECK(epochs == std::vector<fs::path>{run.epoch_checkpoint(2)});
  CHECK(names_in(run.checkpoints_dir()) ==
        std::vector<std::string>{"epoch-001.safetensors", "epoch-003.safetensors", "epoch-004.safetensors", "latest",
                                 "step-00000001.safetensors.tmp-123", "step-00000150.safetensors",
                                 "step-00001200.safetensors"});
}

TEST_CASE("RunDir: --force keeps the newest moved-aside copies only", "[train][run_dir]") {
  ingot::test::TempDir tmp;
  const fs::path base = tmp.path();
  // Copies from earlier --force runs (names as aside_name makes them), another run's copy, and
  // a folder that only looks alike.
  for (const char* name : {"foo.old-20261101-000000", "foo.old-20261102-000000", "foo.old-20261102-000000-2",
                           "foo.old-20261102-000000-10", "foobar.old-20261101-000000", "foo.old-notes"}) {
    fs::create_directories(base / name);
    ingot::test::write_text(base / name / "metrics.jsonl", "{}\n");
  }
  RunDir::open("foo", RunDirMode::Create, base);
  const RunDir run = RunDir::open("foo", RunDirMode::Force, base);  // moves foo aside: the newest copy
  REQUIRE(run.moved_aside().has_value());
  CHECK(run.remove_old_copies(0).empty());
  const auto removed = run.remove_old_copies(2);
  CHECK(removed == std::vector<fs::path>{base / "foo.old-20261101-000000", base / "foo.old-20261102-000000",
                                         base / "foo.old-20261102-000000-2"});
  std::vector<std::string> expected{"foo", "foo.old-20261102-000000-10", "foo.old-notes", "foobar.old-20261101-000000",
                                    run.moved_aside()->filename().string()};
  std::sort(expected.begin(), expected.end());
  CHECK(names_in(base) == expected);
}
