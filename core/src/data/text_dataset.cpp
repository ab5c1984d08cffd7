// The `text` dataset: the corpus read and checked, tokenized once (a SentencePiece model trained
// on it, or taken from the run folder), split by position into train and test token ranges, each
// cut into windows.
#include "ingot/data/text_dataset.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "ingot/base/error.h"
#include "ingot/base/input_file.h"
#include "ingot/config/schema.h"
#include "ingot/data/data_config.h"
#include "ingot/data/kjv_corpus.h"
#include "ingot/runtime/logging.h"

namespace ingot::data {
namespace {

constexpr uint64_t kMaxCorpusBytes = uint64_t{1} << 32;  // beyond this, tokenize to shards (`tokens`)
constexpr int64_t kMaxVocab = int64_t{1} << 20;          // ids stay far inside int32
// Bumped when training settings change (sentencepiece_tokenizer.cpp): an older run's file is
// then not taken for a new training.
constexpr const char* kSentencePieceRecipe = "sentencepiece-1";
constexpr const char* kTokenizerForms =
    "byte, or {type: sentencepiece, vocab_size: N, model_type: bpe|unigram, character_coverage: 1.0}";

/// The keys of the map form of data.text.tokenizer.
config::Schema tokenizer_schema() {
  config::Schema s;
  s.string("type", true, {"byte", "sentencepiece"})
      .integer("vocab_size", 1, static_cast<double>(kMaxVocab))
      .string("model_type", false, {"bpe", "unigram"})
      .number("character_coverage", 0.0, 1.0)
      .string("model")
      .string("file");
  return s;
}

}  // namespace

TokenizerOptions tokenizer_options(const YAML::Node& node, const std::string& file, const std::string& key) {
  TokenizerOptions t;
  const std::string at = config::where(file, node);
  if (node.IsScalar()) {
    if (node.Scalar() == "byte") return t;
    if (node.Scalar() == "sentencepiece")
      throw ConfigError(
          fmt::format("{}: {}: sentencepiece needs a vocab_size: write tokenizer: "
                      "{{type: sentencepiece, vocab_size: 8000}}",
                      at, key));
    throw ConfigError(
        fmt::format("{}: {} {} is not known; valid: {}", at, key, config::quote_value(node.Scalar()), kTokenizerForms));
  }
  if (!node.IsMap()) throw ConfigError(fmt::format("{}: {} must be {}", at, key, kTokenizerForms));
  tokenizer_schema().validate(node, file, key);
  t.type = node["type"].Scalar();
  if (t.type == "byte") {
    INGOT_CHECK_AS(node.size() == 1, ConfigError, "{}: {}: type byte takes no other key", at, key);
    return t;
  }
  if (node["file"]) {  // an existing model: its vocabulary is its own
    t.file = node["file"].Scalar();
    INGOT_CHECK_AS(!node["vocab_size"] && !node["model_type"] && !node["character_coverage"], ConfigError,
                   "{}: {}.file uses an existing SentencePiece model as it is: vocab_size, model_type and "
                   "character_coverage are for training one; remove them",
                   at, key);
    if (node["model"]) t.model = node["model"].Scalar();  // the run's copy (config.resolved.yaml)
    return t;
  }
  INGOT_CHECK_AS(node["vocab_size"], ConfigError,
                 "{}: {}.vocab_size is required with type sentencepiece: the pieces to train "
                 "(e.g. 8000; a few KB of text give a few hundred at most)",
                 at, key);
  SentencePieceOptions& sp = t.sentencepiece;
  sp.vocab_size = node["vocab_size"].as<int64_t>();
  if (node["model_type"]) sp.model_type = node["model_type"].Scalar();
  if (node["character_coverage"]) sp.character_coverage = node["character_coverage"].as<double>();
  INGOT_CHECK_AS(sp.character_coverage > 0.0, ConfigError,
                 "{}: {}.character_coverage must be above 0 (and at most 1), got {}: 1.0 gives every "
                 "character of the corpus a piece, 0.9995 leaves the rarest to <unk>",
                 config::where(file, node["character_coverage"]), key, sp.character_coverage);
  if (node["model"]) {
    t.model = node["model"].Scalar();
    const std::filesystem::path name(t.model);
    INGOT_CHECK_AS(!t.model.empty() && name == name.filename() && t.model != "." && t.model != "..", ConfigError,
                   "{}: {}.model must be a file name in the run folder (the run writes it), got {}",
                   config::where(file, node["model"]), key, config::quote_value(t.model));
  }
  return t;
}

namespace {

/// 64-bit FNV-1a: the corpus's fingerprint in a tokenizer's file name (not a security measure).
uint64_t fnv1a(std::string_view bytes, uint64_t h = 0xcbf29ce484222325ull) {
  for (const char c : bytes) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  return h;
}

/// The corpus's SentencePiece model: the run folder's (a resume: the same file the run began
/// with), else trained.
std::unique_ptr<Tokenizer> corpus_sentencepiece(const SentencePieceOptions& o, const std::string& corpus,
                                                const std::filesystem::path& saved, const std::string& key) {
  std::error_code ec;
  if (!saved.parent_path().empty() && std::filesystem::is_regular_file(saved, ec)) return load_sentencepiece(saved);
  log_info("text: training a {} tokenizer of {} pieces on {} bytes", o.model_type, o.vocab_size, corpus.size());
  return train_sentencepiece(corpus, o, key + ".vocab_size");
}

/// The text of one file, refused when it is not UTF-8: where, as line and byte.
std::string read_text_file(const std::filesystem::path& path) {
  std::string text = read_file(path, kMaxCorpusBytes, "a text corpus (use ingot tokenize and the tokens dataset)");
  const size_t bad = invalid_utf8_at(text);
  if (bad != std::string_view::npos) {
    const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(bad), '\n');
    throw InputError(
        fmt::format("{}: line {}, byte {}: not UTF-8 ({}); the text dataset refuses it rather than "
                    "train on misread bytes: convert the file (e.g. iconv -f latin1 -t utf-8)",
                    path.string(), line, bad, printable(std::string_view(text).substr(bad, 8), 8)));
  }
  return text;
}

}  // namespace

TokenWindows::TokenWindows(std::shared_ptr<const std::vector<int32_t>> ids, int64_t begin, int64_t end, int64_t block,
                           int64_t stride, int64_t vocab)
    : ids_(std::move(ids)), begin_(begin), block_(block), stride_(stride), vocab_(vocab) {
  INGOT_CHECK(block_ >= 1 && stride_ >= 1 && begin_ >= 0 && end >= begin_ && end <= static_cast<int64_t>(ids_->size()),
              "TokenWindows: bad range [{}, {}) of {} ids, block {}, stride {}", begin_, end, ids_->size(), block_,
              stride_);
  windows_ = end - begin_ >= block_ + 1 ? (end - begin_ - block_ - 1) / stride_ + 1 : 0;
}

MaskedWindows::MaskedWindows(std::shared_ptr<const std::vector<int32_t>> ids, int64_t begin, int64_t end, int64_t block,
                             int64_t stride, int64_t vocab, double probability)
    : ids_(std::move(ids)), begin_(begin), block_(block), stride_(stride), vocab_(vocab), probability_(probability) {
  INGOT_CHECK(block_ >= 3 && stride_ >= 1 && begin_ >= 0 && end >= begin_ && end <= static_cast<int64_t>(ids_->size()),
              "MaskedWindows: bad range [{}, {}) of {} ids, block {}, stride {}", begin_, end, ids_->size(), block_,
              stride_);
  windows_ = end - begin_ >= block_ - 2 ? (end - begin_ - (block_ - 2)) / stride_ + 1 : 0;
}

std::optional<TokenMasking> MaskedWindows::masking() const {
  TokenMasking m;
  m.probability = probability_;
  m.mask_id = special_tokens().mask;
  m.ordinary = vocab_;
  return m;
}

void MaskedWindows::read_ids(int64_t index, int64_t* input, int64_t* target) const {
  INGOT_CHECK_AS(index >= 0 && index < windows_, InputError, "text: window {} of {}", index, windows_);
  const int32_t* w = ids_->data() + begin_ + index * stride_;
  const SpecialTokens s = special_tokens();
  input[0] = s.cls;
  for (int64_t t = 0; t < block_ - 2; ++t) input[t + 1] = w[t];
  input[block_ - 1] = s.sep;
  std::copy(input, input + block_, target);
}

void TokenWindows::read_ids(int64_t index, int64_t* input, int64_t* target) const {
  INGOT_CHECK_AS(index >= 0 && index < windows_, InputError, "text: window {} of {}", index, windows_);
  const int32_t* w = ids_->data() + begin_ + index * stride_;
  for (int64_t t = 0; t < block_; ++t) {
    input[t] = w[t];
    target[t] = w[t + 1];
  }
}

std::string read_corpus(const std::string& path) {
  if (path == "kjv") return kjv_text();
  std::error_code ec;
  const std::filesystem::path root(path);
  if (!std::filesystem::is_directory(root, ec)) {
    std::string text = read_text_file(root);
    if (text.empty()) throw InputError(fmt::format("{}: the corpus is empty", path));
    return text;
  }
  std::vector<std::filesystem::path> files;
  for (auto it = std::filesystem::recursive_directory_iterator(root, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!name.empty() && name[0] == '.') {
      if (it->is_directory()) it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file()) files.push_back(it->path());
  }
  if (ec) throw InputError(fmt::format("{}: cannot list the folder: {}", path, ec.message()));
  std::sort(files.begin(), files.end());
  std::string text;
  for (const auto& f : files) {
    text += read_text_file(f);
    if (!text.empty() && text.back() != '\n') text += '\n';
  }
  if (text.empty()) throw InputError(fmt::format("{}: the folder holds no text (no non-empty regular files)", path));
  return text;
}

TextOptions text_options(const YAML::Node& section, const std::string& file) {
  TextOptions o;
  if (!section || !section.IsMap()) return o;
  if (section["path"]) o.path = section["path"].Scalar();
  if (section["tokenizer"]) o.tokenizer = tokenizer_options(section["tokenizer"], file);
  if (section["block_size"]) o.block_size = section["block_size"].as<int64_t>();
  if (section["stride"]) o.stride = section["stride"].as<int64_t>();
  if (section["test_fraction"]) o.test_fraction = section["test_fraction"].as<double>();
  if (section["objective"]) o.objective = section["objective"].Scalar();
  if (section["mask_probability"]) o.mask_probability = section["mask_probability"].as<double>();
  if (o.objective == "mlm")
    INGOT_CHECK_AS(o.block_size >= 3, ConfigError,
                   "{}: data.text.block_size must be at least 3 with objective mlm ([CLS], a token, [SEP]), got {}",
                   config::where(file, section["block_size"]), o.block_size);
  INGOT_CHECK_AS(o.mask_probability > 0.0 && o.mask_probability < 1.0, ConfigError,
                 "{}: data.text.mask_probability must lie between 0 and 1 (exclusive), got {}",
                 config::where(file, section["mask_probability"]), o.mask_probability);
  if (!(o.test_fraction > 0.0 && o.test_fraction < 1.0))
    throw ConfigError(fmt::format("{}: data.text.test_fraction must lie between 0 and 1 (exclusive), got {}",
                                  config::where(file, section["test_fraction"]), o.test_fraction));
  return o;
}

YAML::Node tokenizer_yaml(const TokenizerOptions& t) {
  if (t.type == "byte") return YAML::Node("byte");
  YAML::Node n(YAML::NodeType::Map);
  n["type"] = t.type;
  n["vocab_size"] = t.sentencepiece.vocab_size;
  n["model_type"] = t.sentencepiece.model_type;
  n["character_coverage"] = t.sentencepiece.character_coverage;
  if (!t.model.empty()) n["model"] = t.model;
  return n;
}

std::string sentencepiece_file_name(const SentencePieceOptions& o, std::string_view corpus) {
  const std::string recipe =
      fmt::format("{} {} {} {}", kSentencePieceRecipe, o.model_type, o.vocab_size, o.character_coverage);
  const uint64_t options_hash = fnv1a(std::string_view(recipe.c_str(), recipe.size() + 1));  // (with its NUL)
  return fmt::format("tokenizer-{:016x}.model", fnv1a(corpus, options_hash));
}

std::unique_ptr<Tokenizer> make_tokenizer(const TokenizerOptions& t, const std::filesystem::path& run_dir,
                                          const std::string& key) {
  if (t.type == "byte") return byte_tokenizer();
  INGOT_CHECK_AS(!t.model.empty(), ConfigError,
                 "{}: this config names no trained model ({}.model): a sentencepiece tokenizer is trained by ingot "
                 "run, which records its file in the run's config.resolved.yaml; give the run folder",
                 key, key);
  return load_sentencepiece(run_dir / t.model);
}

std::unique_ptr<Tokenizer> make_tokenizer(const TextOptions& o, const std::filesystem::path& run_dir) {
  return make_tokenizer(o.tokenizer, run_dir);
}

std::unique_ptr<Tokenizer> corpus_tokenizer(const TokenizerOptions& options, const std::string& corpus,
                                            const std::filesystem::path& tokenizer_dir, DatasetSplits& splits,
                                            const std::string& key) {
  if (options.type != "sentencepiece") return byte_tokenizer();
  if (!options.file.empty()) {  // an existing model, copied into the run folder under a name of its bytes
    std::unique_ptr<Tokenizer> tokenizer = load_sentencepiece(options.file);
    const std::string bytes = tokenizer->serialized_model();
    const std::string name = fmt::format("tokenizer-{:016x}.model", fnv1a(bytes));
    splits.run_files.push_back({name, bytes});
    YAML::Node resolved(YAML::NodeType::Map);
    resolved["type"] = "sentencepiece";
    resolved["file"] = options.file;
    resolved["model"] = name;
    splits.resolved["tokenizer"] = resolved;
    return tokenizer;
  }
  TokenizerOptions resolved = options;
  resolved.model = sentencepiece_file_name(options.sentencepiece, corpus);
  std::unique_ptr<Tokenizer> tokenizer =
      corpus_sentencepiece(options.sentencepiece, corpus,
                           tokenizer_dir.empty() ? std::filesystem::path() : tokenizer_dir / resolved.model, key);
  splits.run_files.push_back({resolved.model, tokenizer->serialized_model()});
  splits.resolved["tokenizer"] = tokenizer_yaml(resolved);
  return tokenizer;
}

DatasetSplits text_datasets(const TextOptions& o, const std::filesystem::path& tokenizer_dir) {
  const std::string corpus = read_corpus(o.path);
  DatasetSplits splits;
  const std::unique_ptr<Tokenizer> tokenizer = corpus_tokenizer(o.tokenizer, corpus, tokenizer_dir, splits);
  auto ids = std::make_shared<const std::vector<int32_t>>(tokenizer->encode(corpus));
  const auto n = static_cast<int64_t>(ids->size());
  const bool mlm = o.objective == "mlm";
  const int64_t tokens_per_window = mlm ? o.block_size - 2 : o.block_size;  // (beside [CLS] and [SEP])
  const int64_t stride = o.stride > 0 ? o.stride : tokens_per_window;
  const int64_t split = n - std::llround(o.test_fraction * static_cast<double>(n));
  const int64_t window = mlm ? o.block_size - 2 : o.block_size + 1;
  for (const auto& [what, tokens] : {std::pair{"training", split}, std::pair{"test", n - split}})
    INGOT_CHECK_AS(tokens >= window, InputError,
                   "{}: the {} part holds {} tokens, fewer than one window of {} = {}: use a longer corpus, or "
                   "lower data.text.block_size or test_fraction",
                   o.path, what, tokens, mlm ? "block_size - 2" : "block_size + 1", window);
  const int64_t vocab = tokenizer->vocab_size();
  if (mlm) {
    splits.train = std::make_shared<MaskedWindows>(ids, 0, split, o.block_size, stride, vocab, o.mask_probability);
    splits.test =
        std::make_shared<MaskedWindows>(ids, split, n, o.block_size, o.block_size - 2, vocab, o.mask_probability);
  } else {
    splits.train = std::make_shared<TokenWindows>(ids, 0, split, o.block_size, stride, vocab);
    splits.test = std::make_shared<TokenWindows>(ids, split, n, o.block_size, o.block_size, vocab);
  }
  return splits;
}

void register_text_dataset(DatasetRegistry& registry) {
  config::Schema keys;
  keys.string("path")
      .any("tokenizer")  // byte, or a map: tokenizer_options checks it
      .integer("block_size", 1, 1 << 20)
      .integer("stride", 1, 1 << 20)
      .number("test_fraction", 0.0, 1.0)
      .string("objective", false, {"next_token", "mlm"})
      .number("mask_probability", 0.0, 1.0);
  registry.add({"text", std::move(keys),
                [](const YAML::Node& section, const std::string& file, const DataConfig& c, uint64_t) {
                  return text_datasets(text_options(section, file), c.tokenizer_dir);
                },
                "a UTF-8 file or folder, or the King James Bible (path: kjv), as windows of block_size + 1 "
                "tokens for next-token prediction, or masked windows (objective: mlm) for a BERT (data.text: path, "
                "tokenizer, block_size, stride, test_fraction, objective, mask_probability)"});
}

}  // namespace ingot::data
