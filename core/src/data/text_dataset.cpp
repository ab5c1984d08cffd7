// The `text` dataset: the corpus read and checked, tokenized once, split by position into train
// and test token ranges, each cut into windows.
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

namespace ingot::data {
namespace {

constexpr uint64_t kMaxCorpusBytes = uint64_t{1} << 32;  // beyond this, tokenize to shards (`tokens`)

/// The text of one file, refused when it is not UTF-8: where, as line and byte.
std::string read_text_file(const std::filesystem::path& path) {
  std::string text = read_file(path, kMaxCorpusBytes, "a text corpus (use ingot tokenize and the tokens dataset)");
  const size_t bad = invalid_utf8_at(text);
  if (bad != std::string_view::npos) {
    const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(bad), '\n');
    throw InputError(fmt::format("{}: line {}, byte {}: not UTF-8 ({}); the text dataset refuses it rather than "
                                 "train on misread bytes: convert the file (e.g. iconv -f latin1 -t utf-8)",
                                 path.string(), line, bad, printable(std::string_view(text).substr(bad, 8), 8)));
  }
  return text;
}

}  // namespace

TokenWindows::TokenWindows(std::shared_ptr<const std::vector<int32_t>> ids, int64_t begin, int64_t end, int64_t block,
                           int64_t stride, int64_t vocab)
    : ids_(std::move(ids)), begin_(begin), block_(block), stride_(stride), vocab_(vocab) {
  INGOT_CHECK(block_ >= 1 && stride_ >= 1 && begin_ >= 0 && end >= begin_ &&
                  end <= static_cast<int64_t>(ids_->size()),
              "TokenWindows: bad range [{}, {}) of {} ids, block {}, stride {}", begin_, end, ids_->size(), block_,
              stride_);
  windows_ = end - begin_ >= block_ + 1 ? (end - begin_ - block_ - 1) / stride_ + 1 : 0;
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
  if (section["tokenizer"]) o.tokenizer = section["tokenizer"].Scalar();
  if (section["block_size"]) o.block_size = section["block_size"].as<int64_t>();
  if (section["stride"]) o.stride = section["stride"].as<int64_t>();
  if (section["test_fraction"]) o.test_fraction = section["test_fraction"].as<double>();
  if (!(o.test_fraction > 0.0 && o.test_fraction < 1.0))
    throw ConfigError(fmt::format("{}: data.text.test_fraction must lie between 0 and 1 (exclusive), got {}",
                                  config::where(file, section["test_fraction"]), o.test_fraction));
  return o;
}

std::unique_ptr<Tokenizer> make_tokenizer(const TextOptions& o) {
  INGOT_CHECK_AS(o.tokenizer == "byte", ConfigError, "data.text.tokenizer '{}' is not known; valid: byte",
                 o.tokenizer);
  return byte_tokenizer();
}

DatasetSplits text_datasets(const TextOptions& o) {
  const std::unique_ptr<Tokenizer> tokenizer = make_tokenizer(o);
  auto ids = std::make_shared<const std::vector<int32_t>>(tokenizer->encode(read_corpus(o.path)));
  const auto n = static_cast<int64_t>(ids->size());
  const int64_t stride = o.stride > 0 ? o.stride : o.block_size;
  const int64_t split = n - std::llround(o.test_fraction * static_cast<double>(n));
  const int64_t window = o.block_size + 1;
  for (const auto& [what, tokens] : {std::pair{"training", split}, std::pair{"test", n - split}})
    INGOT_CHECK_AS(tokens >= window, InputError,
                   "{}: the {} part holds {} tokens, fewer than one window of block_size + 1 = {}: use a longer "
                   "corpus, or lower data.text.block_size or test_fraction",
                   o.path, what, tokens, window);
  const int64_t vocab = tokenizer->vocab_size();
  return DatasetSplits{std::make_shared<TokenWindows>(ids, 0, split, o.block_size, stride, vocab),
                       std::make_shared<TokenWindows>(ids, split, n, o.block_size, o.block_size, vocab), {}};
}

void register_text_dataset(DatasetRegistry& registry) {
  config::Schema keys;
  keys.string("path")
      .string("tokenizer", false, {"byte"})
      .integer("block_size", 1, 1 << 20)
      .integer("stride", 1, 1 << 20)
      .number("test_fraction", 0.0, 1.0);
  registry.add({"text", std::move(keys),
                [](const YAML::Node& section, const std::string& file, const DataConfig&, uint64_t) {
                  return text_datasets(text_options(section, file));
                },
                "a UTF-8 file or folder, or the King James Bible (path: kjv), as windows of block_size + 1 "
                "tokens for next-token prediction (data.text: path, tokenizer, block_size, stride, test_fraction)"});
}

}  // namespace ingot::data
