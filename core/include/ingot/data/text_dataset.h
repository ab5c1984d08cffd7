// The `text` dataset: a UTF-8 file or folder (or the King James Bible), tokenized once at load
// and cut into windows of block_size + 1 tokens — the input is the first block_size, the target
// the same window shifted by one (next-token prediction). The last test_fraction of the token
// stream is the test split, so no test window overlaps a training one.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ingot/data/dataset_registry.h"
#include "ingot/data/tokenizer.h"

namespace ingot::data {

/// `data.text:` keys.
struct TextOptions {
  std::string path = "kjv";  ///< a UTF-8 file, a folder of them, or "kjv" (Debian's bible-kjv-text)
  std::string tokenizer = "byte";
  int64_t block_size = 128;   ///< tokens per sample
  int64_t stride = 0;         ///< tokens between window starts; 0 = block_size
  double test_fraction = 0.1;
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

/// The tokenizer `options` name (what the run trained with, for generate and predict).
std::unique_ptr<Tokenizer> make_tokenizer(const TextOptions& options);

/// The train and test windows of the corpus. InputError when a split is shorter than one window.
DatasetSplits text_datasets(const TextOptions& options);

/// Registers type `text` (keys path, tokenizer, block_size, stride, test_fraction).
void register_text_dataset(DatasetRegistry& registry);

}  // namespace ingot::data
