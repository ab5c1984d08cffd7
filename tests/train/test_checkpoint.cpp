// Checkpoint files: the loss scaler's scalars round-trip as "scaler/<key>" metadata, a scaler
// restored from a checkpoint continues identically, checkpoints without them still load, the
// checksum covers every field, and format-1 checkpoints (older Ingot) are verified as they can be.
#include <fmt/format.h>
#include <zlib.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <fstream>
#include <map>
#include <string>
#include <vector>

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

namespace ingot::train {
namespace {

/// `c` as an Ingot before format 2 wrote it: "ingot_checkpoint": "1", the data checksum over tensor
/// names and bytes only (when `with_data_crc`), no checksum over the metadata.
std::string format1_bytes(const Checkpoint& c, bool with_data_crc) {
  io::NamedTensors tensors;
  for (const auto& [name, t] : c.model) tensors.emplace_back("model/" + name, t);
  io::Metadata meta{{"ingot_checkpoint", "1"},
                    {"epoch", std::to_string(c.position.epoch)},
                    {"batch", std::to_string(c.position.batch)},
                    {"step", std::to_string(c.position.step)},
                    {"rng_seed", "0"},
                    {"rng_offset", "0"}};
  for (const auto& [key, value] : c.optimizer.scalars) meta["optimizer/" + key] = value;
  if (with_data_crc) {
    std::sort(tensors.begin(), tensors.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    uLong crc = crc32(0L, Z_NULL, 0);
    for (const auto& [name, t] : tensors) {
      crc = crc32(crc, reinterpret_cast<const Bytef*>(name.data()), static_cast<uInt>(name.size()));
      crc = crc32(crc, static_cast<const Bytef*>(t.storage()->data()), static_cast<uInt>(t.numel() * 4));
    }
    meta["data_crc32"] = fmt::format("{:08x}", static_cast<uint32_t>(crc));
  }
  return io::safetensors_bytes(tensors, meta);
}

void write_file(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

std::string same_length_edit(std::string bytes, const std::string& from, const std::string& to) {
  const size_t at = bytes.find(from);
  REQUIRE(at != std::string::npos);
  REQUIRE(from.size() == to.size());
  return bytes.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("checkpoint: the checksum covers the position and the optimizer's scalars", "[train][checkpoint]") {
  // An edited "step" once resumed 100 steps later with exit 0; now every metadata field is covered.
  test::TempDir tmp;
  const auto file = tmp.path() / "step-00000011.safetensors";
  save_checkpoint(file, small_checkpoint());
  CHECK(io::load_safetensors(file).metadata.at("ingot_checkpoint") == "2");
  CHECK(load_checkpoint(file).note.empty());
  const std::string good = test::read_text(file);
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {R"("step":"11")", R"("step":"21")"},
           {R"("epoch":"1")", R"("epoch":"2")"},
           {R"("rng_offset":"0")", R"("rng_offset":"9")"},
           {R"("optimizer/state.0.step":"11")", R"("optimizer/state.0.step":"91")"}}) {
    INFO(to);
    write_file(file, same_length_edit(good, from, to));
    CHECK_THROWS_WITH(load_checkpoint(file), Catch::Matchers::Contains("the file is damaged"));
  }
  // A format-2 checkpoint whose checksum entry is gone (renamed) has nothing to vouch for it.
  write_file(file, same_length_edit(good, R"("ingot_crc32")", R"("ingot_crc99")"));
  CHECK_THROWS_WITH(load_checkpoint(file), Catch::Matchers::Contains("the checkpoint has lost its checksum"));
}

TEST_CASE("checkpoint: format 1 is verified by its data checksum, with a note", "[train][checkpoint]") {
  test::TempDir tmp;
  const auto file = tmp.path() / "epoch-001.safetensors";
  write_file(file, format1_bytes(small_checkpoint(), true));
  const Checkpoint c = load_checkpoint(file);
  CHECK(c.position.step == 11);
  CHECK(c.note.find("its tensors verify, its position and optimizer settings are taken as they are") !=
        std::string::npos);
  std::string flipped = format1_bytes(small_checkpoint(), true);
  flipped[flipped.size() - 2] ^= 0x04;  // a byte of fc.weight
  write_file(file, flipped);
  CHECK_THROWS_WITH(load_checkpoint(file), Catch::Matchers::Contains("the checkpoint's data is damaged (CRC-32"));
  write_file(file, format1_bytes(small_checkpoint(), false));  // (from before any checksum)
  CHECK(load_checkpoint(file).note.find("unverified") != std::string::npos);
  write_file(file, same_length_edit(format1_bytes(small_checkpoint(), false), R"("ingot_checkpoint":"1")",
                                    R"("ingot_checkpoint":"3")"));
  CHECK_THROWS_WITH(load_checkpoint(file), Catch::Matchers::Contains("checkpoint format '3' is newer"));
}

}  // namespace ingot::train
