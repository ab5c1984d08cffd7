// The `text` dataset: a UTF-8 file or folder (or the King James Bible), tokenized once at load
// and cut into windows of block_size + 1 tokens — the input is the first block_size, the target
// the same window shifted by one (next-token prediction). The last test_fraction of the token
// stream is the test split, so no test window overlaps a training one. A SentencePiece tokenizer
// is trained on the corpus and kept in the run folder, under a name keyed by corpus and options.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ingot/data/dataset_registry.h"
#include "ingot/data/sentencepiece_tokenizer.h"
#include "ingot/data/tokenizer.h"

namespace ingot::data {

/// `data.text.tokenizer`: `byte`, or `{type: sentencepiece, vocab_size, model_type, character_coverage}`.
struct TokenizerOptions {
  std::string type = "byte";  ///< byte | sentencepiece
  SentencePieceOptions sentencepiece;
  /// The trained model's file in the run folder: config.resolved.yaml records it (`model:`), for
  /// `ingot generate`; a config to train need not give it (the run names the file it makes).
  std::string model;
  /// An existing SentencePiece model to use instead of training one (`file:`, a path): another
  /// run's, to fine-tune its encoder on the same ids, or one made with SentencePiece's own tools.
  /// The run keeps a copy in its folder, as it keeps a model it trains.
  std::string file;
};

/// `data.text:` keys.
struct TextOptions {
  std::string path = "kjv";  ///< a UTF-8 file, a folder of them, or "kjv" (Debian's bible-kjv-text)
  TokenizerOptions tokenizer;
  int64_t block_size = 128;  ///< tokens per sample
  int64_t stride = 0;        ///< tokens between window starts; 0 = block_size
  double test_fraction = 0.1;
  /// next_token (a GPT's windows of block_size + 1), or mlm: BERT's masked language model —
  /// [CLS] + block_size - 2 tokens + [SEP], masked by the loader (token_masking.h).
  std::string objective = "next_token";
  double mask_probability = 0.15;  ///< mlm: the share of tokens chosen for prediction
};

/// BERT's pretraining samples: [CLS] ids[begin + i*stride, + block - 2) [SEP], the special
/// tokens after the tokenizer's `vocab` ids; the targets are the ids, which the loader masks.
class MaskedWindows final : public TokenDataset {
 public:
  MaskedWindows(std::shared_ptr<const std::vector<int32_t>> ids, int64_t begin, int64_t end, int64_t block,
                int64_t stride, int64_t vocab, double probability);
  int64_t size() const override { return windows_; }
  Shape sample_shape() const override { return Shape{block_}; }
  Shape target_shape() const override { return Shape{block_}; }
  int64_t num_classes() const override { return vocab_ + kSpecialTokenCount; }
  SpecialTokens special_tokens() const override { return special_tokens_after(vocab_); }
  std::optional<TokenMasking> masking() const override;
  void read_ids(int64_t index, int64_t* input, int64_t* target) const override;

 private:
  std::shared_ptr<const std::vector<int32_t>> ids_;
  int64_t begin_, block_, stride_, vocab_, windows_;
  double probability_;
};

/// Windows of an in-memory token stream: sample i reads ids[begin + i*stride, + block + 1).
class TokenWindows final : public TokenDataset {
 public:
  TokenWindows(std::shared_ptr<const std::vector<int32_t>> ids, int64_t begin, int64_t end, int64_t block,
               int64_t stride, int64_t vocab);
  int64_t size() const override { return windows_; }
  Shape sample_shape() const override { return Shape{block_}; }
  Shape target_shape() const override { return Shape{block_}; }
  int64_t num_classes() const override { return vocab_; }
  void read_ids(int64_t index, int64_t* input, int64_t* target) const override;

 private:
  std::shared_ptr<const std::vector<int32_t>> ids_;
  int64_t begin_, block_, stride_, vocab_, windows_;
};

/// The text at `path`: one file, or every regular file under a folder (in path order, hidden
/// ones skipped, a newline between files that lack one), or "kjv". InputError naming the file,
/// line and byte for invalid UTF-8 (refused, not replaced: a corpus in another encoding would
/// train on garbage), and for a path that is missing or holds no text.
std::string read_corpus(const std::string& path);

/// The options of a `data.text:` section; ConfigError for bad values, naming the key.
TextOptions text_options(const YAML::Node& section, const std::string& file);

/// `<section>.tokenizer` (`byte`, or the sentencepiece map); ConfigError naming the key.
TokenizerOptions tokenizer_options(const YAML::Node& node, const std::string& file,
                                   const std::string& key = "data.text.tokenizer");

/// The tokenizer of `corpus`: byte, or a SentencePiece model read from `tokenizer_dir` when it
/// holds this corpus's file (a resume), else trained on it; a SentencePiece model is added to
/// `splits.run_files` and named in `splits.resolved["tokenizer"]`.
std::unique_ptr<Tokenizer> corpus_tokenizer(const TokenizerOptions& options, const std::string& corpus,
                                            const std::filesystem::path& tokenizer_dir, DatasetSplits& splits,
                                            const std::string& key = "data.text.tokenizer");

/// `options` as config.resolved.yaml writes `data.text.tokenizer`: `byte`, or the map with every
/// default filled in (and `model:` when set).
YAML::Node tokenizer_yaml(const TokenizerOptions& options);

/// The name a SentencePiece model trained on `corpus` with `options` has in the run folder:
/// "tokenizer-<16 hex digits>.model", a hash of both, so that a model made for another corpus or
/// other options is never taken for this one.
std::string sentencepiece_file_name(const SentencePieceOptions& options, std::string_view corpus);

/// The tokenizer the run in `run_dir` trained with (what `ingot generate` encodes prompts with):
/// byte, or the SentencePiece model `options.model` names in `run_dir`. InputError when that file
/// is missing; ConfigError when a sentencepiece tokenizer names no model (a config, not a run's).
std::unique_ptr<Tokenizer> make_tokenizer(const TextOptions& options, const std::filesystem::path& run_dir);
/// The same for the tokenizer section `key` of any text dataset (text_classification's).
std::unique_ptr<Tokenizer> make_tokenizer(const TokenizerOptions& options, const std::filesystem::path& run_dir,
                                          const std::string& key = "data.text.tokenizer");

/// The train and test windows of the corpus. A SentencePiece tokenizer is read from
/// `tokenizer_dir` (the run folder) when it holds the file of this corpus and these options (a
/// resume), else trained; either way the splits carry it in run_files (for the run folder) and
/// name it in resolved (`tokenizer.model`). InputError when a split is shorter than one window.
DatasetSplits text_datasets(const TextOptions& options, const std::filesystem::path& tokenizer_dir = {});

/// Registers type `text` (keys path, tokenizer, block_size, stride, test_fraction); the tokenizer
/// is read from and kept in DataConfig::tokenizer_dir.
void register_text_dataset(DatasetRegistry& registry);

}  // namespace ingot::data
