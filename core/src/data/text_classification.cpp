// The text_classification dataset: CSV records read with quoted fields (commas, quotes and
// newlines inside), or the KJV's verses by testament; labels become class numbers; texts become
// [CLS] tokens [SEP] rows.
#include "ingot/data/text_classification.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "ingot/base/error.h"
#include "ingot/base/input_file.h"
#include "ingot/config/schema.h"
#include "ingot/data/data_config.h"
#include "ingot/data/kjv_corpus.h"

namespace ingot::data {
namespace {

constexpr const char* kKey = "data.text_classification";
constexpr int64_t kMaxTextBytes = int64_t{1} << 32;

/// The next CSV record of `text` from `pos` (advanced past it): its fields and whether one was
/// there. `line` counts the file's lines (newlines inside quotes included).
bool next_record(const std::string& text, size_t& pos, int64_t& line, std::vector<std::string>& fields,
                 const std::string& path) {
  fields.clear();
  if (pos >= text.size()) return false;
  fields.emplace_back();
  const int64_t first_line = line;
  bool quoted = false, was_quoted = false;
  for (; pos < text.size(); ++pos) {
    const char c = text[pos];
    if (quoted) {
      if (c == '"' && pos + 1 < text.size() && text[pos + 1] == '"') {
        fields.back() += '"';
        ++pos;
      } else if (c == '"') {
        quoted = false;
      } else {
        if (c == '\n') ++line;
        fields.back() += c;
      }
    } else if (c == '"' && fields.back().empty() && !was_quoted) {
      quoted = was_quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
      was_quoted = false;
    } else if (c == '\n') {
      ++pos;
      ++line;
      break;
    } else if (c != '\r') {
      fields.back() += c;
    }
  }
  if (quoted)
    throw InputError(fmt::format("{} line {}: a quoted field is not closed before the end of the file: end it with \"",
                                 path, first_line));
  return true;
}

size_t column_of(const std::vector<std::string>& header, const std::string& name, const std::string& path,
                 const char* key) {
  const auto it = std::find(header.begin(), header.end(), name);
  if (it == header.end())
    throw InputError(fmt::format("{}: no column '{}' in the header ({}): name it there, or set {}.{}", path, name,
                                 fmt::join(header, ", "), kKey, key));
  return static_cast<size_t>(it - header.begin());
}

bool is_integer(const std::string& s) {
  if (s.empty() || s.size() > 18) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string csv_path(const YAML::Node& section, const char* key) {
  return section[key] ? section[key].Scalar() : std::string();
}

}  // namespace

TextClassificationDataset::TextClassificationDataset(std::vector<std::vector<int32_t>> tokens,
                                                     std::vector<int64_t> labels, int64_t vocab, int64_t classes,
                                                     int64_t max_length)
    : tokens_(std::move(tokens)),
      labels_(std::move(labels)),
      vocab_(vocab),
      classes_(classes),
      max_length_(max_length) {
  INGOT_CHECK(tokens_.size() == labels_.size() && max_length_ >= 2 && classes_ >= 1,
              "TextClassificationDataset: {} texts, {} labels, max_length {}", tokens_.size(), labels_.size(),
              max_length_);
}

void TextClassificationDataset::read_ids(int64_t index, int64_t* input, int64_t* target) const {
  INGOT_CHECK_AS(index >= 0 && index < size(), InputError, "text_classification: sample {} of {}", index, size());
  const std::vector<int32_t>& t = tokens_[static_cast<size_t>(index)];
  const SpecialTokens s = special_tokens();
  const auto n = static_cast<int64_t>(t.size());
  input[0] = s.cls;
  std::copy(t.begin(), t.end(), input + 1);
  input[n + 1] = s.sep;
  std::fill(input + n + 2, input + max_length_, s.pad);
  target[0] = labels_[static_cast<size_t>(index)];
}

LabelledTexts read_labelled_csv(const std::string& path, const std::string& text_column,
                                const std::string& label_column) {
  const std::string text =
      InputFile(path,
                fmt::format("check {}.train / test / validation (relative paths start at the working directory)", kKey))
          .read_all(kMaxTextBytes, "a CSV file of texts");
  if (const size_t bad = invalid_utf8_at(text); bad != std::string::npos) {
    const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(bad), '\n');
    throw InputError(
        fmt::format("{}: line {}, byte {}: not UTF-8; texts are refused rather than misread: convert "
                    "the file (e.g. iconv -f latin1 -t utf-8)",
                    path, line, bad));
  }
  size_t pos = 0;
  int64_t line = 1;
  std::vector<std::string> header, fields;
  if (!next_record(text, pos, line, header, path))
    throw InputError(
        fmt::format("{}: the file is empty; it needs a header line ({},{}) and rows", path, text_column, label_column));
  const size_t t_col = column_of(header, text_column, path, "text_column");
  const bool labelled = !label_column.empty();
  const size_t l_col = labelled ? column_of(header, label_column, path, "label_column") : 0;
  LabelledTexts out;
  for (int64_t at = line; next_record(text, pos, line, fields, path); at = line) {
    if (fields.size() == 1 && fields[0].empty()) continue;  // a blank line
    if (fields.size() != header.size())
      throw InputError(
          fmt::format("{} line {}: {} fields, the header has {} (a text with a comma must be quoted: "
                      "\"like, this\")",
                      path, at, fields.size(), header.size()));
    if (labelled && fields[l_col].empty())
      throw InputError(
          fmt::format("{} line {}: the label ('{}') is empty: give every row a class", path, at, label_column));
    out.texts.push_back(std::move(fields[t_col]));
    if (labelled) out.labels.push_back(std::move(fields[l_col]));
    out.lines.push_back(at);
  }
  if (out.texts.empty()) throw InputError(fmt::format("{}: no rows after the header", path));
  return out;
}

LabelledTexts kjv_testament_verses() {
  const std::string text = kjv_text();
  LabelledTexts out;
  bool heading = true, new_testament = false;
  int64_t line = 0;
  for (size_t pos = 0; pos < text.size();) {
    const size_t end = std::min(text.find('\n', pos), text.size());
    const std::string row = text.substr(pos, end - pos);
    pos = end + 1;
    ++line;
    if (row.empty()) {
      heading = true;  // a blank line separates chapters; the next line names one
      continue;
    }
    if (heading) {
      if (row == "Matthew 1") new_testament = true;
      heading = false;
      continue;
    }
    out.texts.push_back(row);
    out.labels.emplace_back(new_testament ? "new" : "old");
    out.lines.push_back(line);
  }
  return out;
}

std::vector<int32_t> classification_tokens(const Tokenizer& tokenizer, const std::string& text,
                                           const TextClassificationOptions& o, const std::string& where) {
  std::vector<int32_t> ids = tokenizer.encode(text);
  const auto room = static_cast<size_t>(o.max_length - 2);
  if (ids.size() <= room) return ids;
  if (!o.truncation)
    throw InputError(
        fmt::format("{}: the text is {} tokens, more than max_length {} allows with [CLS] and [SEP] "
                    "({}): raise {}.max_length (at most the model's block_size) or set {}.truncation: "
                    "true to cut long texts",
                    where, ids.size(), o.max_length, room, kKey, kKey));
  ids.resize(room);
  return ids;
}

TextClassificationOptions text_classification_options(const YAML::Node& section, const std::string& file) {
  TextClassificationOptions o;
  if (!section || !section.IsMap()) return o;
  if (section["train"]) o.train = section["train"].Scalar();
  o.test = csv_path(section, "test");
  o.validation = csv_path(section, "validation");
  if (section["text_column"]) o.text_column = section["text_column"].Scalar();
  if (section["label_column"]) o.label_column = section["label_column"].Scalar();
  if (section["tokenizer"])
    o.tokenizer = tokenizer_options(section["tokenizer"], file, std::string(kKey) + ".tokenizer");
  if (section["max_length"]) o.max_length = section["max_length"].as<int64_t>();
  if (section["truncation"]) o.truncation = section["truncation"].as<bool>();
  INGOT_CHECK_AS(o.train == "kjv" || !o.test.empty(), ConfigError,
                 "{}: {}.test is required with a CSV train file: the file of texts to evaluate on",
                 config::where(file, section), kKey);
  return o;
}

DatasetSplits text_classification_datasets(const TextClassificationOptions& o,
                                           const std::filesystem::path& tokenizer_dir) {
  // The files' rows: kjv splits its verses, every tenth to the test set.
  std::vector<std::pair<std::string, LabelledTexts>> parts;
  if (o.train == "kjv" && o.test.empty()) {
    const LabelledTexts all = kjv_testament_verses();
    LabelledTexts train, test;
    for (size_t i = 0; i < all.texts.size(); ++i) {
      LabelledTexts& to = i % 10 == 9 ? test : train;
      to.texts.push_back(all.texts[i]);
      to.labels.push_back(all.labels[i]);
      to.lines.push_back(all.lines[i]);
    }
    parts = {{"kjv", std::move(train)}, {"kjv", std::move(test)}};
  } else {
    parts.emplace_back(
        o.train, o.train == "kjv" ? kjv_testament_verses() : read_labelled_csv(o.train, o.text_column, o.label_column));
    parts.emplace_back(o.test, read_labelled_csv(o.test, o.text_column, o.label_column));
  }
  if (!o.validation.empty())
    parts.emplace_back(o.validation, read_labelled_csv(o.validation, o.text_column, o.label_column));

  DatasetSplits splits;
  // Labels: class numbers when every one is an integer, else names in sorted order.
  std::set<std::string> names;
  bool numbered = true;
  int64_t most = -1;
  for (const auto& [path, rows] : parts)
    for (const std::string& l : rows.labels) {
      names.insert(l);
      numbered = numbered && is_integer(l);
      if (numbered) most = std::max<int64_t>(most, std::stoll(l));
    }
  const std::vector<std::string> sorted(names.begin(), names.end());
  if (!numbered) splits.class_names = sorted;
  const int64_t classes = numbered ? most + 1 : static_cast<int64_t>(sorted.size());
  INGOT_CHECK_AS(classes >= 2, InputError, "{}: every row has the label '{}': a classifier needs two classes or more",
                 parts[0].first, sorted.front());

  std::string corpus;
  if (o.tokenizer.type == "sentencepiece")
    for (const std::string& t : parts[0].second.texts) corpus += t + "\n";
  const std::unique_ptr<Tokenizer> tokenizer =
      corpus_tokenizer(o.tokenizer, corpus, tokenizer_dir, splits, std::string(kKey) + ".tokenizer");
  const int64_t vocab = tokenizer->vocab_size();
  std::vector<std::shared_ptr<const Dataset>> made;
  for (const auto& [path, rows] : parts) {
    std::vector<std::vector<int32_t>> tokens;
    std::vector<int64_t> labels;
    for (size_t i = 0; i < rows.texts.size(); ++i) {
      tokens.push_back(
          classification_tokens(*tokenizer, rows.texts[i], o, fmt::format("{} line {}", path, rows.lines[i])));
      labels.push_back(numbered ? std::stoll(rows.labels[i])
                                : std::lower_bound(sorted.begin(), sorted.end(), rows.labels[i]) - sorted.begin());
    }
    made.push_back(std::make_shared<TextClassificationDataset>(std::move(tokens), std::move(labels), vocab, classes,
                                                               o.max_length));
  }
  splits.train = made[0];
  splits.test = made[1];
  if (made.size() > 2) splits.validation = made[2];
  return splits;
}

void register_text_classification_dataset(DatasetRegistry& registry) {
  config::Schema keys;
  keys.string("train")
      .string("test")
      .string("validation")
      .string("text_column")
      .string("label_column")
      .any("tokenizer")
      .integer("max_length", 3, 1 << 20)
      .boolean("truncation");
  registry.add({"text_classification", std::move(keys),
                [](const YAML::Node& section, const std::string& file, const DataConfig& c, uint64_t) {
                  return text_classification_datasets(text_classification_options(section, file), c.tokenizer_dir);
                },
                "labelled texts for a BERT classifier: a CSV file with text and label columns, or the King James "
                "Bible's verses by testament (train: kjv) (data.text_classification: train, test, validation, "
                "text_column, label_column, tokenizer, max_length, truncation)"});
}

}  // namespace ingot::data
