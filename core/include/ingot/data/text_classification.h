// The `text_classification` dataset: sequences labelled with a class, for a BERT-style classifier.
// A CSV file with a text column and a label column (RFC 4180: quoted fields may hold commas, quotes
// and newlines), or the King James Bible's verses labelled by testament (`kjv`). Each sample is
// [CLS] tokens [SEP], padded with [PAD] to max_length; the loader trims each batch to its longest
// sequence, and the model masks the padding out of attention.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "ingot/data/dataset_registry.h"
#include "ingot/data/text_dataset.h"

namespace ingot::data {

/// `data.text_classification:` keys.
struct TextClassificationOptions {
  std::string train = "kjv";  ///< a CSV file, or "kjv" (verses labelled old / new testament)
  std::string test;           ///< a CSV file; with kjv, every tenth verse when empty
  std::string validation;     ///< the dataset's own validation file (optional)
  std::string text_column = "text";
  std::string label_column = "label";
  TokenizerOptions tokenizer;  ///< trained on the training texts when sentencepiece
  int64_t max_length = 128;    ///< tokens per sample, [CLS] and [SEP] included
  bool truncation = false;     ///< cut longer texts; false: refuse them, naming the row
};

/// Labelled texts, one [CLS] ... [SEP] sequence each, as ids of a tokenizer of `vocab` ids.
class TextClassificationDataset final : public TokenDataset {
 public:
  TextClassificationDataset(std::vector<std::vector<int32_t>> tokens, std::vector<int64_t> labels, int64_t vocab,
                            int64_t classes, int64_t max_length);
  int64_t size() const override { return static_cast<int64_t>(labels_.size()); }
  Shape sample_shape() const override { return Shape{max_length_}; }
  int64_t num_classes() const override { return classes_; }
  int64_t vocab_size() const override { return vocab_ + kSpecialTokenCount; }
  SpecialTokens special_tokens() const override { return special_tokens_after(vocab_); }
  void read_ids(int64_t index, int64_t* input, int64_t* target) const override;

 private:
  std::vector<std::vector<int32_t>> tokens_;  // without [CLS] and [SEP]
  std::vector<int64_t> labels_;
  int64_t vocab_, classes_, max_length_;
};

/// A text table: one text and one label per row, with the row's line in the file (1-based).
struct LabelledTexts {
  std::vector<std::string> texts, labels;
  std::vector<int64_t> lines;
};

/// The text and label columns of the CSV file `path` (the text column alone when label_column is
/// empty: texts to predict). InputError naming the file and line for a missing column, a row with
/// the wrong number of fields, an empty label, text that is not UTF-8, an unterminated quote.
LabelledTexts read_labelled_csv(const std::string& path, const std::string& text_column,
                                const std::string& label_column);

/// The King James Bible's verses labelled "old" and "new" (testament), in book order.
LabelledTexts kjv_testament_verses();

/// The options of a `data.text_classification:` section; ConfigError naming the key.
TextClassificationOptions text_classification_options(const YAML::Node& section, const std::string& file);

/// The train, test (and validation) splits; class names in sorted order unless every label is an
/// integer (then class numbers, as the csv dataset).
DatasetSplits text_classification_datasets(const TextClassificationOptions& options,
                                           const std::filesystem::path& tokenizer_dir = {});

/// The tokens of one text (without [CLS] and [SEP]): cut to max_length - 2 with truncation, else
/// InputError naming `where` (file and row) and the keys to change when they do not fit.
std::vector<int32_t> classification_tokens(const Tokenizer& tokenizer, const std::string& text,
                                           const TextClassificationOptions& options, const std::string& where);

/// Registers type `text_classification`.
void register_text_classification_dataset(DatasetRegistry& registry);

}  // namespace ingot::data
