// Checkpoint files: the loss scaler's scalars round-trip as "scaler/<key>" metadata, a scaler
// restored from a checkpoint continues identically, and checkpoints without them still load.
#include <catch2/catch.hpp>

#include <bit>
#include <map>
#include <string>

#include "ingot/amp/grad_scaler.h"
#include "ingot/io/safetensors.h"
#include "ingot/ops/creation.h"
#include "ingot/train/checkpoint.h"
#include "temp_dir.h"

namespace ingot::train {
namespace {

Checkpoint small_checkpoint() {
  Checkpoint c;
  c.position.epoch = 1;
  c.position.batch = 3;
  c.position.step = 11;
  c.model.emplace_back("fc.weight", Tensor::from_vector<float>({1.5f, -2.0f}, Shape{2}));
  c.optimizer.scalars["state.0.step"] = "11";
  return c;
}

}  // namespace

TEST_CASE("checkpoint: the loss scaler's state round-trips and continues identically", "[train][checkpoint]") {
  test::TempDir tmp;
  amp::GradScalerOptions o;
  o.init_scale = 1000.0;  // scales that are not powers of two need every digit
  o.growth_factor = 3.0;
  o.backoff_factor = 0.3;
  o.growth_interval = 2;
  o.hysteresis = 2;
  amp::GradScaler a(o);
  const bool flags[] = {true, false, false, true, true, false, true, false, false, false, true, true, false, false};
  for (int i = 0; i < 6; ++i) a.update(flags[i]);

  Checkpoint c = small_checkpoint();
  c.scaler = a.state_dict();
  const auto file = tmp.path() / "ck.safetensors";
  save_checkpoint(file, c);
  const io::SafetensorsFile raw = io::load_safetensors(file);
  CHECK(raw.metadata.at("scaler/scale") == c.scaler.at("scale"));
  CHECK(raw.metadata.at("scaler/hysteresis_left") == c.scaler.at("hysteresis_left"));

  const Checkpoint back = load_checkpoint(file);
  CHECK(back.scaler == c.scaler);
  CHECK(back.optimizer.scalars == c.optimizer.scalars);  // the two prefixes stay apart
  amp::GradScaler b(o);
  b.load_state_dict(back.scaler);
  for (size_t i = 6; i < std::size(flags); ++i) {
    INFO("update " << i);
    REQUIRE(a.update(flags[i]) == b.update(flags[i]));
    REQUIRE(std::bit_cast<uint64_t>(a.get_scale()) == std::bit_cast<uint64_t>(b.get_scale()));
    REQUIRE(a.growth_tracker() == b.growth_tracker());
    REQUIRE(a.hysteresis_left() == b.hysteresis_left());
    REQUIRE(a.skipped_steps() == b.skipped_steps());
  }
}

TEST_CASE("checkpoint: no scaler state writes no scaler metadata, and older checkpoints load", "[train][checkpoint]") {
  test::TempDir tmp;
  const auto file = tmp.path() / "ck.safetensors";
  save_checkpoint(file, small_checkpoint());
  for (const auto& [key, value] : io::load_safetensors(file).metadata) CHECK(key.rfind("scaler/", 0) != 0);
  CHECK(load_checkpoint(file).scaler.empty());

  // A checkpoint from before the scaler was recorded: the same file without any "scaler/" key,
  // written by hand like an older Ingot did.
  Checkpoint c = small_checkpoint();
  c.scaler = amp::GradScaler().state_dict();
  save_checkpoint(file, c);
  io::SafetensorsFile raw = io::load_safetensors(file);
  std::erase_if(raw.metadata, [](const auto& kv) { return kv.first.rfind("scaler/", 0) == 0; });
  REQUIRE(raw.metadata.count("ingot_checkpoint") == 1);
  io::save_safetensors(file, raw.tensors, raw.metadata);
  const Checkpoint old = load_checkpoint(file);
  CHECK(old.scaler.empty());
  CHECK(old.position.step == 11);
}

}  // namespace ingot::train
