// Model selection on the validation split: the best-epoch tracker (min / max, min_delta, patience,
// non-finite values), its state through a checkpoint, and best.safetensors never taken for a
// resume point.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>

#include "ingot/train/checkpoint.h"
#include "ingot/train/early_stopping.h"
#include "ingot/train/run_dir.h"
#include "temp_dir.h"

namespace ingot::train {
namespace {

EarlyStoppingConfig stopping(const std::string& metric, int64_t patience, double min_delta = 0.0,
                             const std::string& mode = "") {
  EarlyStoppingConfig c;
  c.enabled = true;
  c.metric = metric;
  c.patience = patience;
  c.min_delta = min_delta;
  c.mode = mode;
  return c;
}

}  // namespace

TEST_CASE("model selection: val_loss is minimised, val_accuracy maximised, and patience counts epochs without "
          "improvement", "[train][early_stopping]") {
  ModelSelection loss(stopping("val_loss", 2));
  CHECK(loss.minimises());
  CHECK(loss.monitored(0.5, 0.9) == 0.5);
  CHECK(loss.update(0.5, 1));
  CHECK_FALSE(loss.update(0.6, 2));
  CHECK_FALSE(loss.exhausted());
  CHECK(loss.update(0.4, 3));  // an improvement resets the count
  CHECK_FALSE(loss.update(0.4, 4));  // equal is not better
  CHECK_FALSE(loss.update(0.45, 5));
  CHECK(loss.exhausted());
  CHECK(loss.best() == 0.4);
  CHECK(loss.best_epoch() == 3);

  ModelSelection acc(stopping("val_accuracy", 1));
  CHECK_FALSE(acc.minimises());
  CHECK(acc.monitored(0.5, 0.9) == 0.9);
  CHECK(acc.update(0.8, 1));
  CHECK(acc.update(0.85, 2));
  CHECK_FALSE(acc.update(0.7, 3));
  CHECK(acc.exhausted());
  CHECK(acc.best_epoch() == 2);

  ModelSelection forced(stopping("val_loss", 1, 0.0, "max"));  // mode overrides the metric's direction
  CHECK(forced.update(1.0, 1));
  CHECK(forced.update(2.0, 2));
}

TEST_CASE("model selection: an improvement must exceed min_delta, and a non-finite value never improves",
          "[train][early_stopping]") {
  ModelSelection s(stopping("val_loss", 3, 0.1));
  CHECK(s.update(1.0, 1));
  CHECK_FALSE(s.update(0.95, 2));  // better by 0.05 < min_delta
  CHECK(s.best() == 1.0);
  CHECK(s.update(0.85, 3));
  CHECK_FALSE(s.update(std::nan(""), 4));
  CHECK_FALSE(s.update(-INFINITY, 5));
  CHECK(s.best() == 0.85);
  CHECK(s.epochs_without_improvement() == 2);
  ModelSelection first(stopping("val_loss", 1));
  CHECK_FALSE(first.update(std::nan(""), 1));  // not even as the first value
  CHECK_FALSE(first.best().has_value());
}

TEST_CASE("model selection: its state travels in a checkpoint, so a resumed run stops where an uninterrupted one "
          "would", "[train][early_stopping]") {
  test::TempDir tmp;
  ModelSelection a(stopping("val_loss", 3));
  a.update(0.123456789012345678, 1);
  a.update(0.2, 2);
  Checkpoint c;
  c.position.epoch = 2;
  c.position.step = 20;
  c.selection = a.state();
  save_checkpoint(tmp.path() / "epoch-002.safetensors", c);
  const Checkpoint back = load_checkpoint(tmp.path() / "epoch-002.safetensors");
  ModelSelection b(stopping("val_loss", 3));
  b.restore(back.selection);
  CHECK(b.best() == a.best());  // every digit
  CHECK(b.best_epoch() == 1);
  CHECK(b.epochs_without_improvement() == 1);
  // The continuation decides as the original does.
  for (int64_t epoch = 3; epoch <= 4; ++epoch) CHECK(a.update(0.3, epoch) == b.update(0.3, epoch));
  CHECK(a.exhausted());
  CHECK(b.exhausted());
  // A checkpoint without selection state (an older run, or no validation): a fresh start.
  b.restore({});
  CHECK_FALSE(b.best().has_value());
  CHECK(b.epochs_without_improvement() == 0);
}

TEST_CASE("run folder: checkpoints/best.safetensors is never a resume point", "[train][early_stopping]") {
  test::TempDir tmp;
  RunDir run = RunDir::open("r", RunDirMode::Create, tmp.path());
  Checkpoint c;
  c.model.emplace_back("w", Tensor::from_vector<float>({1.0f}, Shape{1}));
  save_checkpoint(run.epoch_checkpoint(1).string() + ".safetensors", c);
  save_checkpoint(run.best_checkpoint().string() + ".safetensors", c);  // written last: the newest file
  const auto stems = run.checkpoints_to_try();
  REQUIRE(stems.size() == 1);
  CHECK(stems[0] == run.epoch_checkpoint(1));
}

}  // namespace ingot::train
