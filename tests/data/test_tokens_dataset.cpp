// The tokens dataset: llm.c shards written and read back (uint16 and uint32), windows of
// block_size + 1 inside each shard, shard files from a file, a folder or a glob, batches through
// the loader, and the errors for a wrong magic, a truncated body, a short shard, an id past the
// vocabulary and missing keys, each naming the file.
#include <catch2/catch.hpp>

#include <cstring>
#include <numeric>

#include "data_test_util.h"
#include "ingot/base/error.h"
#include "ingot/data/data_config.h"
#include "ingot/data/tokens_dataset.h"

namespace ingot::data {
namespace {

std::vector<int32_t> iota_ids(int n, int first, int modulo) {
  std::vector<int32_t> ids(n);
  for (int i = 0; i < n; ++i) ids[i] = (first + i) % modulo;
  return ids;
}

int32_t header_int(const std::vector<uint8_t>& bytes, int k) {
  int32_t v;
  std::memcpy(&v, bytes.data() + 4 * k, 4);
  return v;
}

std::shared_ptr<const TokenShard> shard(const std::string& file) { return std::make_shared<const TokenShard>(file); }

TEST_CASE("token shards: llm.c's header and tokens, uint16 or uint32 by vocabulary", "[data][tokens]") {
  test::TempDir dir;
  write_token_shard(dir.file("a.bin"), iota_ids(50, 0, 1000), 1000);
  const std::vector<uint8_t> a = test::read_plain(dir.file("a.bin"));
  REQUIRE(a.size() == 1024 + 50 * 2);
  CHECK(header_int(a, 0) == kShardMagicU16);
  CHECK(header_int(a, 1) == 1);
  CHECK(header_int(a, 2) == 50);
  CHECK(header_int(a, 255) == 0);
  write_token_shard(dir.file("b.bin"), iota_ids(30, 69990, 70000), 70000);
  const std::vector<uint8_t> b = test::read_plain(dir.file("b.bin"));
  REQUIRE(b.size() == 1024 + 30 * 4);
  CHECK(header_int(b, 0) == kShardMagicU32);
  CHECK(header_int(b, 1) == 7);
  const auto sa = shard(dir.file("a.bin"));
  const auto sb = shard(dir.file("b.bin"));
  CHECK(sa->tokens() == 50);
  CHECK(sa->token_bytes() == 2);
  CHECK(sa->at(49) == 49);
  CHECK(sb->token_bytes() == 4);
  CHECK(sb->at(0) == 69990);
  CHECK(sb->at(29) == 19);  // (69990 + 29) % 70000
  CHECK_THROWS_AS(write_token_shard(dir.file("c.bin"), std::vector<int32_t>{5, 1000}, 1000), InputError);
  CHECK(!std::filesystem::exists(dir.file("c.bin")));  // atomic: nothing left of a refused write
}

TEST_CASE("shard windows: block_size + 1 tokens every block_size, never across shards", "[data][tokens]") {
  test::TempDir dir;
  write_token_shard(dir.file("s0.bin"), iota_ids(50, 0, 1000), 1000);
  write_token_shard(dir.file("s1.bin"), iota_ids(30, 500, 1000), 1000);
  const ShardWindows w({shard(dir.file("s0.bin")), shard(dir.file("s1.bin"))}, 8, 1000);
  // (50 - 9) / 8 + 1 = 6 windows, then (30 - 9) / 8 + 1 = 3
  REQUIRE(w.size() == 9);
  CHECK(w.input_dtype() == DType::I64);
  CHECK(w.sample_shape() == Shape{8});
  CHECK(w.target_shape() == Shape{8});
  CHECK(w.num_classes() == 1000);
  std::vector<int64_t> in(8), target(8);
  w.read_ids(5, in.data(), target.data());  // the last window of shard 0: tokens 40..48
  CHECK(in[0] == 40);
  CHECK(target[7] == 48);
  w.read_ids(6, in.data(), target.data());  // the first of shard 1
  for (int t = 0; t < 8; ++t) {
    CHECK(in[t] == 500 + t);
    CHECK(target[t] == 501 + t);
  }
  CHECK_THROWS_AS(w.read_ids(9, in.data(), target.data()), InputError);
}

TEST_CASE("shard files: a file, a folder's *.bin files, a glob, sorted", "[data][tokens]") {
  test::TempDir dir;
  for (const char* name : {"train_000001.bin", "train_000000.bin", "test_000000.bin"})
    write_token_shard(dir.file(name), iota_ids(20, 0, 256), 256);
  test::write_plain(dir.file("tokenizer.model"), {1, 2, 3});
  const auto glob = shard_files(dir.file("train_*.bin"), "data.tokens.train");
  REQUIRE(glob.size() == 2);
  CHECK(glob[0].filename() == "train_000000.bin");
  CHECK(shard_files(dir.path().string(), "data.tokens.train").size() == 3);  // not tokenizer.model
  CHECK(shard_files(dir.file("test_000000.bin"), "k").size() == 1);
  CHECK_THAT(test::input_error_of([&] { shard_files(dir.file("val_*.bin"), "data.tokens.test"); }),
             Catch::Contains("data.tokens.test") && Catch::Contains("names no shard file"));
}

TEST_CASE("tokens shards that are not whole are refused, naming the file", "[data][tokens]") {
  test::TempDir dir;
  write_token_shard(dir.file("ok.bin"), iota_ids(40, 0, 256), 256);
  std::vector<uint8_t> bytes = test::read_plain(dir.file("ok.bin"));
  std::vector<uint8_t> magic = bytes;
  magic[0] ^= 1;
  test::write_plain(dir.file("magic.bin"), magic);
  CHECK_THAT(test::input_error_of([&] { shard(dir.file("magic.bin")); }),
             Catch::Contains("magic.bin: not an llm.c token shard") && Catch::Contains("20240520"));
  test::write_plain(dir.file("cut.bin"), std::vector<uint8_t>(bytes.begin(), bytes.end() - 3));
  CHECK_THAT(test::input_error_of([&] { shard(dir.file("cut.bin")); }),
             Catch::Contains("cut.bin: truncated") && Catch::Contains("40 tokens"));
  std::vector<uint8_t> longer = bytes;
  longer.push_back(0);
  test::write_plain(dir.file("long.bin"), longer);
  CHECK_THAT(test::input_error_of([&] { shard(dir.file("long.bin")); }), Catch::Contains("1 bytes past the 40 tokens"));
  test::write_plain(dir.file("tiny.bin"), std::vector<uint8_t>(100, 0));
  CHECK_THAT(test::input_error_of([&] { shard(dir.file("tiny.bin")); }),
             Catch::Contains("shorter than the 1024-byte header"));
  CHECK_THAT(test::input_error_of([&] { shard(dir.file("missing.bin")); }), Catch::Contains("missing.bin"));
  CHECK_THAT(test::input_error_of([&] { ShardWindows({shard(dir.file("ok.bin"))}, 40, 256); }),
             Catch::Contains("ok.bin: 40 tokens, fewer than one window of block_size + 1 = 41"));
}

TEST_CASE("a token id past the vocabulary is found when its window is read", "[data][tokens]") {
  test::TempDir dir;
  std::vector<int32_t> ids = iota_ids(40, 0, 100);
  ids[21] = 150;
  write_token_shard(dir.file("v.bin"), ids, 256);
  const ShardWindows w({shard(dir.file("v.bin"))}, 8, 100);  // the config says 100 ids
  std::vector<int64_t> in(8), target(8);
  w.read_ids(0, in.data(), target.data());  // tokens 0..8: fine
  CHECK_THAT(test::input_error_of([&] { w.read_ids(2, in.data(), target.data()); }),
             Catch::Contains("v.bin: token 150 at position 21 (byte 1066) is not below data.tokens.vocab_size 100"));
}

TEST_CASE("data.tokens from YAML: int64 batches through the loader and missing keys", "[data][tokens]") {
  test::TempDir dir;
  write_token_shard(dir.file("train_000000.bin"), iota_ids(200, 0, 50), 50);
  write_token_shard(dir.file("train_000001.bin"), iota_ids(100, 7, 50), 50);
  write_token_shard(dir.file("test_000000.bin"), iota_ids(60, 3, 50), 50);
  const YAML::Node node = YAML::Load("{dataset: tokens, batch_size: 4, tokens: {train: '" + dir.file("train_*.bin") +
                                     "', test: " + dir.file("test_000000.bin") + ", block_size: 10, vocab_size: 50}}");
  data_schema().validate(node, "t.yaml", "data");
  const DataLoaders l = make_data_loaders(parse_data_config(node, "t.yaml"), 1);
  CHECK(l.train->dataset().size() == (200 - 11) / 10 + 1 + (100 - 11) / 10 + 1);
  CHECK(l.test->dataset().size() == (60 - 11) / 10 + 1);
  CHECK(l.train->dataset().num_classes() == 50);
  l.train->begin_epoch(0);
  const auto batch = l.train->next();
  REQUIRE(batch);
  CHECK(batch->inputs.dtype() == DType::I64);
  CHECK(batch->inputs.shape() == Shape{4, 10});
  CHECK(batch->targets.shape() == Shape{4, 10});
  const auto missing = [&](const std::string& yaml) {
    try {
      tokens_options(YAML::Load(yaml), "t.yaml");
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK_THAT(missing("{train: a.bin, test: b.bin}"), Catch::Contains("data.tokens.vocab_size is required"));
  CHECK_THAT(missing("{train: a.bin, vocab_size: 5}"), Catch::Contains("data.tokens.test is required"));
}

}  // namespace
}  // namespace ingot::data
