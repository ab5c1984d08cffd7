// The text dataset: byte tokens, windows of block_size + 1 shifted by one, the positional test
// split, token batches through the loader (workers and prefetch give the same batches), UTF-8
// checks, and the errors for a corpus too short, a missing path, an empty folder.
#include <catch2/catch.hpp>

#include <fstream>

#include "data_test_util.h"
#include "ingot/base/error.h"
#include "ingot/data/data_config.h"
#include "ingot/data/data_loader.h"
#include "ingot/data/kjv_corpus.h"
#include "ingot/data/text_dataset.h"
#include "ingot/data/tokenizer.h"
#include "test_support.h"

namespace ingot::data {
namespace {

void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

TEST_CASE("byte tokenizer round-trips UTF-8 and replaces a cut character", "[data][text]") {
  const auto tok = byte_tokenizer();
  CHECK(tok->vocab_size() == 256);
  const std::string text = "In the beginning \xC3\xA9\xE2\x82\xAC";  // é €
  const std::vector<int32_t> ids = tok->encode(text);
  CHECK(ids.size() == text.size());
  CHECK(ids[0] == 'I');
  CHECK(tok->decode(ids) == text);
  std::vector<int32_t> cut(ids.begin(), ids.end() - 1);  // the euro sign's last byte missing
  CHECK(tok->decode(cut) == "In the beginning \xC3\xA9\xEF\xBF\xBD\xEF\xBF\xBD");
  CHECK_THROWS_AS(tok->decode(std::vector<int32_t>{300}), InputError);
}

TEST_CASE("invalid_utf8_at finds overlong forms, surrogates, stray continuations", "[data][text]") {
  CHECK(invalid_utf8_at("plain ascii") == std::string_view::npos);
  CHECK(invalid_utf8_at("ok \xF0\x9F\x98\x80") == std::string_view::npos);
  CHECK(invalid_utf8_at("ab\x80") == 2);
  CHECK(invalid_utf8_at("a\xC0\xAF") == 1);          // overlong '/'
  CHECK(invalid_utf8_at("a\xED\xA0\x80") == 1);      // a surrogate
  CHECK(invalid_utf8_at("a\xF4\x90\x80\x80") == 1);  // past U+10FFFF
  CHECK(invalid_utf8_at("a\xE2\x82") == 1);          // cut at the end
}

TEST_CASE("text windows: input and the target shifted by one, test split after training", "[data][text]") {
  test::TempDir dir;
  std::string corpus;
  for (int i = 0; i < 100; ++i) corpus += static_cast<char>('a' + i % 26);
  write_text(dir.file("c.txt"), corpus);
  TextOptions o;
  o.path = dir.file("c.txt");
  o.block_size = 8;
  o.test_fraction = 0.2;
  const DatasetSplits s = text_datasets(o);
  // 80 training tokens: windows of 9 every 8 -> (80 - 9) / 8 + 1 = 9; 20 test tokens -> 2
  REQUIRE(s.train->size() == 9);
  REQUIRE(s.test->size() == 2);
  CHECK(s.train->input_dtype() == DType::I64);
  CHECK(s.train->sample_shape() == Shape{8});
  CHECK(s.train->target_shape() == Shape{8});
  CHECK(s.train->num_classes() == 256);
  std::vector<int64_t> in(8), target(8);
  s.train->read_ids(1, in.data(), target.data());
  for (int t = 0; t < 8; ++t) {
    CHECK(in[t] == corpus[8 + t]);
    CHECK(target[t] == corpus[9 + t]);
  }
  s.test->read_ids(0, in.data(), target.data());
  CHECK(in[0] == corpus[80]);  // the test part starts where training ends
  CHECK_THROWS_AS(s.train->read_ids(9, in.data(), target.data()), InputError);
  std::vector<float> pixels(8);
  CHECK_THROWS(s.train->read(0, pixels.data()));
}

TEST_CASE("token batches are int64 [B, T] with [B, T] targets, the same for any worker count", "[data][text]") {
  test::TempDir dir;
  std::string corpus;
  for (int i = 0; i < 3000; ++i) corpus += static_cast<char>(' ' + (i * 7) % 90);
  write_text(dir.file("c.txt"), corpus);
  TextOptions o;
  o.path = dir.file("c.txt");
  o.block_size = 16;
  const DatasetSplits s = text_datasets(o);
  std::vector<std::vector<int64_t>> first;
  for (const int workers : {0, 2}) {
    LoaderOptions lo;
    lo.batch_size = 4;
    lo.shuffle = true;
    lo.seed = 7;
    lo.num_workers = workers;
    DataLoader loader(s.train, lo);
    loader.begin_epoch(1);
    std::vector<std::vector<int64_t>> seen;
    while (auto b = loader.next()) {
      REQUIRE(b->inputs.dtype() == DType::I64);
      REQUIRE(b->targets.dtype() == DType::I64);
      REQUIRE(b->inputs.dim() == 2);
      REQUIRE(b->inputs.size(1) == 16);
      REQUIRE(b->targets.shape() == b->inputs.shape());
      const std::vector<int64_t> in = b->inputs.to_vector<int64_t>(), tg = b->targets.to_vector<int64_t>();
      for (size_t i = 0; i + 1 < in.size(); ++i)
        if ((i + 1) % 16 != 0) CHECK(tg[i] == in[i + 1]);
      seen.push_back(in);
    }
    if (first.empty()) first = seen;
    CHECK(seen == first);
  }
  LoaderOptions augmented;
  augmented.augment.hflip = true;
  CHECK_THROWS_AS(DataLoader(s.train, augmented), ConfigError);
}

TEST_CASE("text corpus errors name the file and what to do", "[data][text]") {
  test::TempDir dir;
  write_text(dir.file("short.txt"), "tiny");
  TextOptions o;
  o.path = dir.file("short.txt");
  o.block_size = 8;
  const std::string short_msg = test::input_error_of([&] { text_datasets(o); });
  CHECK_THAT(short_msg, Catch::Contains("short.txt") && Catch::Contains("fewer than one window") &&
                            Catch::Contains("block_size"));
  write_text(dir.file("latin1.txt"), "line one\ncaf\xE9 au lait\n");
  o.path = dir.file("latin1.txt");
  const std::string utf_msg = test::input_error_of([&] { text_datasets(o); });
  CHECK_THAT(utf_msg, Catch::Contains("latin1.txt: line 2, byte 12: not UTF-8") && Catch::Contains("iconv"));
  o.path = dir.file("missing.txt");
  CHECK_THAT(test::input_error_of([&] { text_datasets(o); }), Catch::Contains("missing.txt"));
  std::filesystem::create_directory(dir.path() / "empty");
  o.path = (dir.path() / "empty").string();
  CHECK_THAT(test::input_error_of([&] { text_datasets(o); }), Catch::Contains("holds no text"));
}

TEST_CASE("a folder corpus reads its files in path order, hidden ones skipped", "[data][text]") {
  test::TempDir dir;
  std::filesystem::create_directory(dir.path() / "sub");
  write_text((dir.path() / "b.txt").string(), "second");
  write_text((dir.path() / "a.txt").string(), "first\n");
  write_text((dir.path() / ".hidden").string(), "never");
  write_text((dir.path() / "sub" / "c.txt").string(), "third");
  CHECK(read_corpus(dir.path().string()) == "first\nsecond\nthird\n");
}

TEST_CASE("data.text from YAML: the text type, its keys, and bad values", "[data][text]") {
  test::TempDir dir;
  write_text(dir.file("c.txt"), std::string(500, 'x'));
  const YAML::Node node = YAML::Load("{dataset: text, batch_size: 2, text: {path: " + dir.file("c.txt") +
                                     ", block_size: 10, stride: 5, test_fraction: 0.2}}");
  data_schema().validate(node, "c.yaml", "data");
  const DataConfig c = parse_data_config(node, "c.yaml");
  const DataLoaders loaders = make_data_loaders(c, 1);
  CHECK(loaders.train->dataset().size() == (400 - 11) / 5 + 1);
  CHECK(loaders.test->dataset().size() == (100 - 11) / 10 + 1);  // test windows never overlap
  const YAML::Node bad = YAML::Load("{dataset: text, text: {tokenizer: bpe}}");
  CHECK_THROWS_AS(data_schema().validate(bad, "c.yaml", "data"), ConfigError);
}

TEST_CASE("the King James Bible of bible-kjv-text", "[data][text][kjv]") {
  if (!std::filesystem::exists(kKjvDataFile)) {
    test::skip("Debian's bible-kjv-text is not installed (scripts/setup installs it)");
    return;
  }
  const std::string text = kjv_text();
  CHECK(text.size() > 4000000);
  CHECK(text.rfind("Genesis 1\nIn the beginning God created the heaven and the earth.\n", 0) == 0);
  CHECK(text.find("The grace of our Lord Jesus Christ be with you all. Amen.\n") != std::string::npos);
  CHECK(invalid_utf8_at(text) == std::string_view::npos);
}

}  // namespace
}  // namespace ingot::data
