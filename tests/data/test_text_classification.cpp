// The text_classification dataset: CSV records with quoted commas, quotes and newlines, labels as
// names or numbers, [CLS] ... [SEP] rows padded with [PAD], batches trimmed to their longest
// sequence, long texts refused or cut, the errors that name file and line; and BERT's masking
// (80 / 10 / 10, specials never chosen, the same for any worker count).
#include <catch2/catch.hpp>

#include <fstream>

#include "data_test_util.h"
#include "ingot/base/error.h"
#include "ingot/data/data_loader.h"
#include "ingot/data/sentencepiece_tokenizer.h"
#include "ingot/data/text_classification.h"
#include "ingot/data/text_dataset.h"
#include "ingot/data/token_masking.h"
#include "test_support.h"

namespace ingot::data {
namespace {

void write_text(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

TEST_CASE("text_classification: quoted fields, class names, [CLS] tokens [SEP] padded", "[data][text]") {
  test::TempDir dir;
  write_text(dir.file("train.csv"),
             "id,text,label\n"
             "1,\"ab, \"\"c\"\"\",pos\n"
             "2,\"two\nlines\",neg\n"
             "\n"
             "3,x,pos\n");
  write_text(dir.file("test.csv"), "text,label,id\nzz,neg,4\n");
  TextClassificationOptions o;
  o.train = dir.file("train.csv");
  o.test = dir.file("test.csv");
  o.max_length = 12;
  const DatasetSplits s = text_classification_datasets(o);
  REQUIRE(s.train->size() == 3);
  CHECK(s.test->size() == 1);
  CHECK(s.class_names == std::vector<std::string>{"neg", "pos"});
  CHECK(s.train->num_classes() == 2);
  CHECK(s.train->vocab_size() == 260);  // 256 bytes, [PAD], [CLS], [SEP], [MASK]
  const SpecialTokens sp = s.train->special_tokens();
  CHECK(sp.pad == 256);
  CHECK(sp.cls == 257);
  CHECK(sp.sep == 258);
  CHECK(sp.mask == 259);
  std::vector<int64_t> ids(12);
  int64_t label = -1;
  s.train->read_ids(0, ids.data(), &label);
  CHECK(label == 1);  // pos
  const std::string text = "ab, \"c\"";
  CHECK(ids[0] == 257);
  for (size_t i = 0; i < text.size(); ++i) CHECK(ids[i + 1] == static_cast<unsigned char>(text[i]));
  CHECK(ids[text.size() + 1] == 258);
  CHECK(ids[11] == 256);
  s.train->read_ids(1, ids.data(), &label);
  CHECK(label == 0);
  CHECK(ids[4] == '\n');  // "two\nlines"
}

TEST_CASE("text_classification: integer labels are class numbers and bad rows name file and line", "[data][text]") {
  test::TempDir dir;
  write_text(dir.file("a.csv"), "text,label\nhello,0\nworld,2\n");
  TextClassificationOptions o;
  o.train = o.test = dir.file("a.csv");
  const DatasetSplits s = text_classification_datasets(o);
  CHECK(s.class_names.empty());
  CHECK(s.train->num_classes() == 3);

  write_text(dir.file("empty_label.csv"), "text,label\nhello,0\nworld,\n");
  o.train = dir.file("empty_label.csv");
  CHECK_THAT(test::input_error_of([&] { text_classification_datasets(o); }),
             Catch::Contains("empty_label.csv line 3") && Catch::Contains("label"));
  write_text(dir.file("fields.csv"), "text,label\nhello, world,0\n");
  o.train = dir.file("fields.csv");
  CHECK_THAT(test::input_error_of([&] { text_classification_datasets(o); }),
             Catch::Contains("fields.csv line 2") && Catch::Contains("quoted"));
  write_text(dir.file("quote.csv"), "text,label\n\"open,0\n");
  o.train = dir.file("quote.csv");
  CHECK_THAT(test::input_error_of([&] { text_classification_datasets(o); }), Catch::Contains("not closed"));
  write_text(dir.file("latin1.csv"), "text,label\ncaf\xE9,0\nok,1\n");
  o.train = dir.file("latin1.csv");
  CHECK_THAT(test::input_error_of([&] { text_classification_datasets(o); }),
             Catch::Contains("line 2") && Catch::Contains("not UTF-8"));
  write_text(dir.file("column.csv"), "sentence,label\nhello,0\n");
  o.train = dir.file("column.csv");
  CHECK_THAT(test::input_error_of([&] { text_classification_datasets(o); }), Catch::Contains("text_column"));
  write_text(dir.file("one.csv"), "text,label\nhello,x\nworld,x\n");
  o.train = o.test = dir.file("one.csv");
  CHECK_THAT(test::input_error_of([&] { text_classification_datasets(o); }), Catch::Contains("two classes"));
}

TEST_CASE("text_classification: a text past max_length is refused, or cut with truncation", "[data][text]") {
  test::TempDir dir;
  write_text(dir.file("a.csv"), "text,label\nshort,0\nmuch too long here,1\n");
  TextClassificationOptions o;
  o.train = o.test = dir.file("a.csv");
  o.max_length = 8;
  CHECK_THAT(test::input_error_of([&] { text_classification_datasets(o); }),
             Catch::Contains("a.csv line 3") && Catch::Contains("max_length") && Catch::Contains("truncation"));
  o.truncation = true;
  const DatasetSplits s = text_classification_datasets(o);
  std::vector<int64_t> ids(8);
  int64_t label = 0;
  s.train->read_ids(1, ids.data(), &label);
  CHECK(ids[5] == ' ');  // [CLS] "much t" [SEP]
  CHECK(ids[6] == 't');
  CHECK(ids[7] == 258);
}

TEST_CASE("text_classification batches are padded to their longest sequence, not max_length", "[data][text]") {
  test::TempDir dir;
  write_text(dir.file("a.csv"), "text,label\nab,0\nabcdef,1\nc,0\nd,1\n");
  TextClassificationOptions o;
  o.train = o.test = dir.file("a.csv");
  o.max_length = 32;
  const DatasetSplits s = text_classification_datasets(o);
  LoaderOptions lo;
  lo.batch_size = 2;
  DataLoader loader(s.train, lo);
  loader.begin_epoch(0);
  const Batch first = *loader.next();
  CHECK(first.inputs.shape() == Shape{2, 8});  // [CLS] abcdef [SEP]
  CHECK(first.targets.shape() == Shape{2});
  CHECK(first.inputs.to_vector<int64_t>()[4] == 256);  // "ab" row: [CLS] a b [SEP] [PAD]...
  const Batch second = *loader.next();
  CHECK(second.inputs.shape() == Shape{2, 3});
  SECTION("pad_to_multiple_of rounds the length up, to max_length at most") {
    lo.pad_to_multiple_of = 5;
    DataLoader padded(s.train, lo);
    padded.begin_epoch(0);
    const Batch a = *padded.next(), b = *padded.next();
    CHECK(a.inputs.shape() == Shape{2, 10});
    CHECK(b.inputs.shape() == Shape{2, 5});
    CHECK(b.inputs.to_vector<int64_t>()[3] == 256);  // "c" row: [CLS] c [SEP] [PAD] [PAD]
    lo.pad_to_multiple_of = 40;  // beyond max_length 32
    DataLoader capped(s.train, lo);
    capped.begin_epoch(0);
    CHECK(capped.next()->inputs.shape() == Shape{2, 32});
  }
}

TEST_CASE("token masking: 15% chosen, 80/10/10, specials kept, a pure function of seed and sample", "[data][text]") {
  TokenMasking m;
  m.mask_id = 103;
  m.ordinary = 100;
  const int64_t n = 200000;
  std::vector<int64_t> ids(n), original, targets(n);
  for (int64_t i = 0; i < n; ++i) ids[i] = i % 101;  // id 100 is special: never chosen
  original = ids;
  mask_tokens(m, 7, 0, 3, ids.data(), targets.data(), n);
  int64_t chosen = 0, masked = 0, kept = 0, special_chosen = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (targets[i] == -100) {
      CHECK(ids[i] == original[i]);
      continue;
    }
    ++chosen;
    CHECK(targets[i] == original[i]);
    if (original[i] == 100) ++special_chosen;
    if (ids[i] == 103)
      ++masked;
    else if (ids[i] == original[i])
      ++kept;
    else
      CHECK(ids[i] < 100);
  }
  CHECK(special_chosen == 0);
  const double ordinary = n * 100.0 / 101.0;
  CHECK(std::abs(chosen / ordinary - 0.15) < 0.005);
  CHECK(std::abs(static_cast<double>(masked) / chosen - 0.8) < 0.01);
  // kept: 10%, plus the random draws that hit the same id (1% of the random 10%)
  CHECK(std::abs(static_cast<double>(kept) / chosen - 0.101) < 0.01);
  std::vector<int64_t> again = original, targets2(n);
  mask_tokens(m, 7, 0, 3, again.data(), targets2.data(), n);
  CHECK(again == ids);
  std::vector<int64_t> other = original;
  mask_tokens(m, 7, 1, 3, other.data(), targets2.data(), n);  // another epoch: other tokens
  CHECK(other != ids);
}

TEST_CASE("text objective mlm: [CLS] window [SEP], masked by the loader alike for any worker count", "[data][text]") {
  test::TempDir dir;
  std::string corpus;
  for (int i = 0; i < 200; ++i) corpus += "In the beginning God created the heaven and the earth. ";
  write_text(dir.file("c.txt"), corpus);
  TextOptions o;
  o.path = dir.file("c.txt");
  o.block_size = 16;
  o.objective = "mlm";
  const DatasetSplits s = text_datasets(o);
  CHECK(s.train->num_classes() == 260);
  CHECK(s.train->target_shape() == Shape{16});
  std::vector<int64_t> ids(16), targets(16);
  s.train->read_ids(1, ids.data(), targets.data());
  CHECK(ids[0] == 257);
  CHECK(ids[15] == 258);
  CHECK(ids[1] == static_cast<unsigned char>(corpus[14]));  // window 1 starts 14 tokens in
  std::vector<std::vector<int64_t>> runs[2];
  for (const int workers : {0, 2}) {
    LoaderOptions lo;
    lo.batch_size = 8;
    lo.num_workers = workers;
    lo.shuffle = true;
    lo.seed = 3;
    DataLoader loader(s.train, lo);
    loader.begin_epoch(1);
    while (auto b = loader.next()) {
      runs[workers == 0 ? 0 : 1].push_back(b->inputs.to_vector<int64_t>());
      runs[workers == 0 ? 0 : 1].push_back(b->targets.to_vector<int64_t>());
    }
  }
  CHECK(runs[0] == runs[1]);
  int64_t masked = 0, targets_set = 0;
  for (size_t i = 0; i < runs[0].size(); i += 2)
    for (size_t j = 0; j < runs[0][i].size(); ++j) {
      masked += runs[0][i][j] == 259;
      targets_set += runs[0][i + 1][j] != -100;
    }
  CHECK(targets_set > 0);
  CHECK(masked > 0);
  CHECK(masked < targets_set);
}

}  // namespace
}  // namespace ingot::data

namespace ingot::data {
namespace {

TEST_CASE("text_classification: an existing SentencePiece model (file:) is used as it is and kept in the run",
          "[data][text]") {
  test::TempDir dir;
  std::string corpus;
  for (int i = 0; i < 300; ++i) corpus += "in the beginning was the word, and the word was good " + std::to_string(i % 7) + "\n";
  SentencePieceOptions sp;
  sp.vocab_size = 60;
  write_text(dir.file("other.model"), train_sentencepiece(corpus, sp, "test")->serialized_model());
  write_text(dir.file("a.csv"), "text,label\nthe word was good,1\nin the beginning,0\n");
  TextClassificationOptions o;
  o.train = o.test = dir.file("a.csv");
  const YAML::Node node = YAML::Load("{type: sentencepiece, file: " + dir.file("other.model") + "}");
  o.tokenizer = tokenizer_options(node, "c.yaml", "data.text_classification.tokenizer");
  const DatasetSplits s = text_classification_datasets(o);
  CHECK(s.train->vocab_size() == 64);  // its 60 pieces and the 4 special tokens
  REQUIRE(s.run_files.size() == 1);
  CHECK(s.run_files[0].bytes == load_sentencepiece(dir.file("other.model"))->serialized_model());
  CHECK(s.resolved["tokenizer"]["file"].as<std::string>() == dir.file("other.model"));
  CHECK(s.resolved["tokenizer"]["model"].as<std::string>() == s.run_files[0].name);
  // vocab_size is for training one; a missing file names itself
  CHECK_THROWS_AS(tokenizer_options(YAML::Load("{type: sentencepiece, file: x.model, vocab_size: 9}"), "c.yaml"),
                  ConfigError);
  o.tokenizer.file = dir.file("missing.model");
  CHECK_THAT(test::input_error_of([&] { text_classification_datasets(o); }), Catch::Contains("missing.model"));
}

}  // namespace
}  // namespace ingot::data
