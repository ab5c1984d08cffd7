// The text dataset: byte tokens, windows of block_size + 1 shifted by one, the positional test
// split, token batches through the loader (workers and prefetch give the same batches), UTF-8
// checks, and the errors for a corpus too short, a missing path, an empty folder; SentencePiece
// tokenizers: training, round trips, determinism, the saved model reused, a vocabulary too large.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>

#include "data_test_util.h"
#include "ingot/base/error.h"
#include "ingot/base/input_file.h"
#include "ingot/data/data_config.h"
#include "ingot/data/data_loader.h"
#include "ingot/data/kjv_corpus.h"
#include "ingot/data/sentencepiece_tokenizer.h"
#include "ingot/data/text_dataset.h"
#include "ingot/data/tokenizer.h"
#include "test_support.h"

namespace ingot::data {
namespace {

void write_text(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

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
  CHECK_THAT(short_msg,
             Catch::Contains("short.txt") && Catch::Contains("fewer than one window") && Catch::Contains("block_size"));
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
  data_schema().validate(bad, "c.yaml", "data");  // (the tokenizer's forms are checked when it is read)
  CHECK_THROWS_AS(make_data_loaders(parse_data_config(bad, "c.yaml"), 1), ConfigError);
}

/// A few KB of sentences drawn from a small vocabulary (a fixed generator: the same text every run).
std::string synthetic_corpus() {
  static const char* words[] = {"the",   "cat",   "sat",  "on",    "mat",
                                "dog",   "ran",   "far",  "away",  "and",
                                "a",     "big",   "red",  "ball",  "\xC3\xA9t\xC3\xA9",
                                "light", "house", "over", "river", "stone",
                                "tree",  "sun",   "moon", "night"};
  uint32_t state = 12345;
  std::string text;
  for (int line = 0; line < 160; ++line) {
    state = state * 1664525u + 1013904223u;
    const int n = 3 + static_cast<int>(state >> 28);
    for (int w = 0; w < n; ++w) {
      state = state * 1664525u + 1013904223u;
      text += (w ? " " : "") + std::string(words[(state >> 16) % std::size(words)]);
    }
    text += line % 7 == 6 ? "!\n" : ".\n";
  }
  return text;
}

TEST_CASE("sentencepiece: trained on a corpus, its text round-trips", "[data][text][sentencepiece]") {
  const std::string corpus = synthetic_corpus();
  REQUIRE(corpus.size() > 3000);
  for (const char* type : {"bpe", "unigram"}) {
    INFO(type);
    const auto tok = train_sentencepiece(corpus, {64, type}, "vocab");
    CHECK(tok->type() == "sentencepiece");
    CHECK(tok->vocab_size() == 64);
    const std::vector<int32_t> ids = tok->encode(corpus);
    CHECK(ids.size() < corpus.size() / 2);  // pieces longer than bytes
    CHECK(std::all_of(ids.begin(), ids.end(), [](int32_t id) { return id >= 3 && id < 64; }));  // no <unk>
    CHECK(tok->decode(ids) == corpus);                                                // spaces and newlines kept
    const std::string unseen = "  the red \xC3\xA9t\xC3\xA9\nmoon over  the house!";  // new order, double spaces
    CHECK(tok->decode(tok->encode(unseen)) == unseen);
    CHECK(tok->encode("").empty());
    CHECK_THROWS_AS(tok->decode(std::vector<int32_t>{64}), InputError);
  }
}

TEST_CASE("sentencepiece: two trainings give the same model, which loads back", "[data][text][sentencepiece]") {
  const std::string corpus = synthetic_corpus();
  const auto a = train_sentencepiece(corpus, {64, "bpe"}, "vocab");
  const auto b = train_sentencepiece(corpus, {64, "bpe"}, "vocab");
  REQUIRE(!a->serialized_model().empty());
  CHECK(a->serialized_model() == b->serialized_model());
  const auto u1 = train_sentencepiece(corpus, {64, "unigram"}, "vocab");
  const auto u2 = train_sentencepiece(corpus, {64, "unigram"}, "vocab");
  CHECK(u1->serialized_model() == u2->serialized_model());
  CHECK(u1->serialized_model() != a->serialized_model());
  test::TempDir dir;
  write_text(dir.file("m.model"), a->serialized_model());
  const auto loaded = load_sentencepiece(dir.file("m.model"));
  CHECK(loaded->encode(corpus) == a->encode(corpus));
  write_text(dir.file("bad.model"), "not a model");
  CHECK_THAT(test::input_error_of([&] { load_sentencepiece(dir.file("bad.model")); }),
             Catch::Contains("bad.model") && Catch::Contains("not a SentencePiece model"));
  CHECK_THAT(test::input_error_of([&] { load_sentencepiece(dir.file("missing.model")); }),
             Catch::Contains("missing.model"));
}

TEST_CASE("sentencepiece: the text dataset keeps its model and reuses the run folder's",
          "[data][text][sentencepiece]") {
  test::TempDir dir;
  write_text(dir.file("c.txt"), synthetic_corpus());
  TextOptions o;
  o.path = dir.file("c.txt");
  o.block_size = 16;
  o.tokenizer.type = "sentencepiece";
  o.tokenizer.sentencepiece = {80, "bpe"};
  const std::filesystem::path run = dir.path() / "run";  // not there yet, as before the run opens
  const DatasetSplits first = text_datasets(o, run);
  REQUIRE(first.run_files.size() == 1);
  const std::string name = first.run_files[0].name;
  CHECK(name == sentencepiece_file_name(o.tokenizer.sentencepiece, synthetic_corpus()));
  CHECK_THAT(name, Catch::StartsWith("tokenizer-") && Catch::EndsWith(".model"));
  CHECK(first.train->num_classes() == 80);
  CHECK(first.resolved["tokenizer"]["model"].Scalar() == name);
  CHECK(first.resolved["tokenizer"]["model_type"].Scalar() == "bpe");
  // Other options or another corpus give another file name.
  CHECK(sentencepiece_file_name({81, "bpe"}, synthetic_corpus()) != name);
  CHECK(sentencepiece_file_name({80, "bpe"}, synthetic_corpus() + "x") != name);

  // A resume: the file in the run folder is what the dataset uses, not a new training (a model of
  // 70 pieces put under the name shows it).
  std::filesystem::create_directory(run);
  write_text((run / name).string(), train_sentencepiece(synthetic_corpus(), {70, "bpe"}, "vocab")->serialized_model());
  const DatasetSplits resumed = text_datasets(o, run);
  CHECK(resumed.train->num_classes() == 70);
  CHECK(resumed.run_files[0].bytes == read_file(run / name, 1 << 20, "model"));

  // generate: the run's config names the file; make_tokenizer reads it from the run folder.
  TextOptions recorded = o;
  recorded.tokenizer.model = name;
  CHECK(make_tokenizer(recorded, run)->vocab_size() == 70);
  CHECK_THROWS_AS(make_tokenizer(o, run), ConfigError);  // a config that names no model
  CHECK_THAT(test::input_error_of([&] { make_tokenizer(recorded, dir.path()); }), Catch::Contains(name));
  const TextOptions defaults;
  CHECK(make_tokenizer(defaults, run)->type() == "byte");
}

TEST_CASE("sentencepiece: a vocabulary the corpus cannot give is one line naming the key",
          "[data][text][sentencepiece]") {
  test::TempDir dir;
  write_text(dir.file("c.txt"), synthetic_corpus());
  TextOptions o;
  o.path = dir.file("c.txt");
  o.tokenizer.type = "sentencepiece";
  o.tokenizer.sentencepiece = {5000, "bpe"};
  std::string msg;
  try {
    text_datasets(o);
  } catch (const ConfigError& e) {
    msg = e.what();
  }
  CHECK_THAT(msg, Catch::StartsWith("data.text.tokenizer.vocab_size: 5000 is more pieces than this corpus gives") &&
                      Catch::Contains("at most") && Catch::Contains("lower data.text.tokenizer.vocab_size to"));
  o.tokenizer.sentencepiece = {10, "unigram"};
  msg.clear();
  try {
    text_datasets(o);
  } catch (const ConfigError& e) {
    msg = e.what();
  }
  CHECK_THAT(msg, Catch::Contains("data.text.tokenizer.vocab_size: 10 is fewer pieces than the corpus needs") &&
                      Catch::Contains("raise"));
}

TEST_CASE("data.text.tokenizer: byte or a sentencepiece map, bad forms name the key", "[data][text][sentencepiece]") {
  const auto options = [](const std::string& yaml) { return text_options(YAML::Load(yaml), "c.yaml"); };
  CHECK(options("{tokenizer: byte}").tokenizer.type == "byte");
  CHECK(options("{tokenizer: {type: byte}}").tokenizer.type == "byte");
  const TextOptions sp =
      options("{tokenizer: {type: sentencepiece, vocab_size: 100, model_type: unigram, character_coverage: 0.9995}}");
  CHECK(sp.tokenizer.type == "sentencepiece");
  CHECK(sp.tokenizer.sentencepiece.vocab_size == 100);
  CHECK(sp.tokenizer.sentencepiece.model_type == "unigram");
  CHECK(sp.tokenizer.sentencepiece.character_coverage == 0.9995);
  const YAML::Node resolved = tokenizer_yaml(options("{tokenizer: {type: sentencepiece, vocab_size: 64}}").tokenizer);
  CHECK(resolved["model_type"].Scalar() == "bpe");
  CHECK(resolved["character_coverage"].as<double>() == 1.0);
  CHECK(tokenizer_yaml(TokenizerOptions{}).Scalar() == "byte");
  const auto error_of = [&](const std::string& yaml) {
    try {
      options(yaml);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK_THAT(error_of("{tokenizer: bpe}"), Catch::Contains("data.text.tokenizer 'bpe' is not known"));
  CHECK_THAT(error_of("{tokenizer: sentencepiece}"), Catch::Contains("needs a vocab_size"));
  CHECK_THAT(error_of("{tokenizer: {type: sentencepiece}}"),
             Catch::Contains("data.text.tokenizer.vocab_size is required"));
  CHECK_THAT(error_of("{tokenizer: {type: sentencepiece, vocab_size: 64, vocab: 3}}"), Catch::Contains("vocab"));
  CHECK_THAT(error_of("{tokenizer: {type: sentencepiece, vocab_size: 64, model_type: wordpiece}}"),
             Catch::Contains("model_type"));
  CHECK_THAT(error_of("{tokenizer: {type: sentencepiece, vocab_size: 64, character_coverage: 0}}"),
             Catch::Contains("character_coverage must be above 0"));
  CHECK_THAT(error_of("{tokenizer: {type: sentencepiece, vocab_size: 64, model: ../x.model}}"),
             Catch::Contains("data.text.tokenizer.model must be a file name"));
  CHECK_THAT(error_of("{tokenizer: [byte]}"), Catch::Contains("data.text.tokenizer must be"));
}

TEST_CASE("make_data_loaders: a sentencepiece section resolves to its model file", "[data][text][sentencepiece]") {
  test::TempDir dir;
  write_text(dir.file("c.txt"), synthetic_corpus());
  const YAML::Node node = YAML::Load("{dataset: text, text: {path: " + dir.file("c.txt") +
                                     ", block_size: 8, tokenizer: {type: sentencepiece, vocab_size: 64}}}");
  data_schema().validate(node, "c.yaml", "data");
  const DataConfig c = parse_data_config(node, "c.yaml");
  const DataLoaders l = make_data_loaders(c, 1);
  REQUIRE(l.run_files.size() == 1);
  CHECK(l.section["tokenizer"]["model"].Scalar() == l.run_files[0].name);
  CHECK(l.section["block_size"].as<int64_t>() == 8);  // the rest as written
  CHECK(!node["text"]["tokenizer"]["model"]);         // the config's own tree untouched
  CHECK(data_config_yaml(c)["text"]["tokenizer"]["type"].Scalar() == "sentencepiece");
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
