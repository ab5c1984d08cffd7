// The `tokens` dataset: llm.c's token shards — a header of 256 little-endian int32 (magic
// 20240520 with uint16 tokens or 20240801 with uint32 tokens, version, token count), then the
// tokens — memory-mapped read-only, so a corpus larger than memory streams from disk. Samples are
// windows of block_size + 1 tokens every block_size tokens inside one shard (no window spans two
// shards); input the first block_size, target the same shifted by one.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ingot/data/dataset.h"
#include "ingot/data/dataset_registry.h"

namespace ingot::data {

inline constexpr int32_t kShardMagicU16 = 20240520;  ///< llm.c's GPT-2 shards: uint16 tokens, version 1
inline constexpr int32_t kShardMagicU32 = 20240801;  ///< llm.c's Llama 3 shards: uint32 tokens, version 7
inline constexpr int64_t kShardHeaderInts = 256;

/// `data.tokens:` keys.
struct TokensOptions {
  std::string train;  ///< a shard file, a folder (its *.bin files) or a glob (train_*.bin)
  std::string test;
  int64_t block_size = 128;
  int64_t vocab_size = 0;  ///< ids must lie below it; the model's vocabulary
};

/// One shard file, mapped read-only for as long as the object lives. InputError naming the file
/// for a wrong magic, a file shorter than its header, or a body that is not exactly the token
/// count of the header (truncated, or bytes past the end).
class TokenShard {
 public:
  explicit TokenShard(const std::filesystem::path& file);
  ~TokenShard();
  TokenShard(const TokenShard&) = delete;
  TokenShard& operator=(const TokenShard&) = delete;

  const std::string& file() const { return file_; }
  int64_t tokens() const { return tokens_; }
  int64_t token_bytes() const { return token_bytes_; }  ///< 2 or 4
  /// Token `i` (0-based, after the header).
  uint32_t at(int64_t i) const;

 private:
  std::string file_;
  void* map_ = nullptr;
  size_t map_bytes_ = 0;
  const unsigned char* body_ = nullptr;
  int64_t tokens_ = 0;
  int64_t token_bytes_ = 2;
};

/// Windows over shards: window i is tokens [k*block, k*block + block + 1) of the shard it falls in.
class ShardWindows final : public TokenDataset {
 public:
  /// InputError naming the shard when it is shorter than one window of block + 1.
  ShardWindows(std::vector<std::shared_ptr<const TokenShard>> shards, int64_t block, int64_t vocab);
  int64_t size() const override { return starts_.back(); }
  Shape sample_shape() const override { return Shape{block_}; }
  Shape target_shape() const override { return Shape{block_}; }
  int64_t num_classes() const override { return vocab_; }
  /// InputError naming the file and the token's position when a token is not below the vocabulary
  /// (checked here, per window read: a scan at load would read the whole corpus before step one).
  void read_ids(int64_t index, int64_t* input, int64_t* target) const override;

 private:
  std::vector<std::shared_ptr<const TokenShard>> shards_;
  std::vector<int64_t> starts_;  ///< starts_[s] = the first window of shard s; back() = all windows
  int64_t block_, vocab_;
};

/// The shard files `spec` names, sorted: the file itself, the *.bin files of a folder (not below
/// it), or the files a glob matches. InputError naming `key` when there are none.
std::vector<std::filesystem::path> shard_files(const std::string& spec, const std::string& key);

/// Writes `ids` as one shard atomically: uint16 tokens (magic 20240520) when `vocab_size` <= 65536,
/// else uint32 (20240801). InputError when an id is outside [0, vocab_size) or there are more than
/// 2^31 - 1 of them (the header's count is an int32).
void write_token_shard(const std::filesystem::path& file, std::span<const int32_t> ids, int64_t vocab_size);

/// The options of a `data.tokens:` section; ConfigError naming the key for a missing train, test
/// or vocab_size.
TokensOptions tokens_options(const YAML::Node& section, const std::string& file);

/// The train and test windows of the shards.
DatasetSplits tokens_datasets(const TokensOptions& options);

/// Registers type `tokens` (keys train, test, block_size, vocab_size).
void register_tokens_dataset(DatasetRegistry& registry);

}  // namespace ingot::data
