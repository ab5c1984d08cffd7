// The `tokens` dataset: llm.c shards checked and mapped at load (header and size only; the body
// is read by the page cache as windows are read), windows within each shard, and the writer
// `ingot tokenize` uses.
#include "ingot/data/tokens_dataset.h"

#include <fmt/format.h>
#include <glob.h>
#include <sys/mman.h>

#include <algorithm>
#include <bit>
#include <cstring>

#include "ingot/base/error.h"
#include "ingot/base/input_file.h"
#include "ingot/config/schema.h"
#include "ingot/io/atomic_write.h"

namespace ingot::data {
namespace {

static_assert(std::endian::native == std::endian::little, "llm.c shards are little-endian, read as they lie");

constexpr int64_t kHeaderBytes = kShardHeaderInts * 4;
constexpr int64_t kMaxVocab = (int64_t{1} << 31) - 1;
constexpr const char* kRewrite = "write the shards again (ingot tokenize CORPUS -o DIR)";

bool is_glob(const std::string& s) { return s.find_first_of("*?[") != std::string::npos; }

}  // namespace

TokenShard::TokenShard(const std::filesystem::path& path) : file_(path.string()) {
  const InputFile in(path, "check data.tokens.train / test");
  if (in.size() < static_cast<uint64_t>(kHeaderBytes))
    throw InputError(fmt::format("{}: {} bytes, shorter than the {}-byte header of an llm.c token shard: {}", file_,
                                 in.size(), kHeaderBytes, kRewrite));
  int32_t header[kShardHeaderInts];
  in.read_at(header, sizeof header, 0);
  if (header[0] != kShardMagicU16 && header[0] != kShardMagicU32)
    throw InputError(fmt::format("{}: not an llm.c token shard: magic {} (expected {} for uint16 tokens or {} for "
                                 "uint32): {}",
                                 file_, header[0], kShardMagicU16, kShardMagicU32, kRewrite));
  token_bytes_ = header[0] == kShardMagicU16 ? 2 : 4;
  tokens_ = header[2];  // (header[1], the version, is not needed: the magic fixes the layout)
  const uint64_t body = in.size() - kHeaderBytes;
  const uint64_t expected = static_cast<uint64_t>(std::max<int64_t>(tokens_, 0)) * token_bytes_;
  if (tokens_ < 0 || body < expected)
    throw InputError(fmt::format("{}: truncated: its header counts {} tokens ({} bytes after the header) but the "
                                 "file holds {}: copy it again, or {}",
                                 file_, tokens_, expected, body, kRewrite));
  if (body > expected)
    throw InputError(fmt::format("{}: {} bytes past the {} tokens its header counts: not a shard written whole: {}",
                                 file_, body - expected, tokens_, kRewrite));
  map_bytes_ = static_cast<size_t>(in.size());
  map_ = mmap(nullptr, map_bytes_, PROT_READ, MAP_PRIVATE, in.fd(), 0);
  if (map_ == MAP_FAILED) {
    map_ = nullptr;
    throw InputError(fmt::format("{}: cannot map the shard into memory: {}", file_, std::strerror(errno)));
  }
  body_ = static_cast<const unsigned char*>(map_) + kHeaderBytes;
}

TokenShard::~TokenShard() {
  if (map_ != nullptr) munmap(map_, map_bytes_);
}

uint32_t TokenShard::at(int64_t i) const {
  if (token_bytes_ == 2) {
    uint16_t v;
    std::memcpy(&v, body_ + i * 2, 2);  // (the body is only 2-byte aligned in general)
    return v;
  }
  uint32_t v;
  std::memcpy(&v, body_ + i * 4, 4);
  return v;
}

ShardWindows::ShardWindows(std::vector<std::shared_ptr<const TokenShard>> shards, int64_t block, int64_t vocab)
    : shards_(std::move(shards)), block_(block), vocab_(vocab) {
  INGOT_CHECK(block_ >= 1 && vocab_ >= 1, "ShardWindows: block {}, vocab {}", block_, vocab_);
  starts_.push_back(0);
  for (const auto& s : shards_) {
    INGOT_CHECK_AS(s->tokens() >= block_ + 1, InputError,
                   "{}: {} tokens, fewer than one window of block_size + 1 = {} (windows do not span shards): lower "
                   "data.tokens.block_size, or leave this shard out",
                   s->file(), s->tokens(), block_ + 1);
    starts_.push_back(starts_.back() + (s->tokens() - block_ - 1) / block_ + 1);
  }
}

void ShardWindows::read_ids(int64_t index, int64_t* input, int64_t* target) const {
  INGOT_CHECK_AS(index >= 0 && index < size(), InputError, "tokens: window {} of {}", index, size());
  const auto s = static_cast<size_t>(std::upper_bound(starts_.begin(), starts_.end(), index) - starts_.begin() - 1);
  const TokenShard& shard = *shards_[s];
  const int64_t first = (index - starts_[s]) * block_;
  for (int64_t t = 0; t <= block_; ++t) {
    const uint32_t id = shard.at(first + t);
    if (id >= static_cast<uint64_t>(vocab_))
      throw InputError(fmt::format("{}: token {} at position {} (byte {}) is not below data.tokens.vocab_size {}: "
                                   "set vocab_size to the tokenizer's vocabulary, or {}",
                                   shard.file(), id, first + t, kHeaderBytes + (first + t) * shard.token_bytes(),
                                   vocab_, kRewrite));
    if (t < block_) input[t] = id;
    if (t > 0) target[t - 1] = id;
  }
}

std::vector<std::filesystem::path> shard_files(const std::string& spec, const std::string& key) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  if (is_glob(spec)) {
    glob_t g{};
    const int rc = glob(spec.c_str(), 0, nullptr, &g);
    for (size_t i = 0; rc == 0 && i < g.gl_pathc; ++i) files.emplace_back(g.gl_pathv[i]);
    globfree(&g);
  } else if (std::filesystem::is_directory(spec, ec)) {
    for (const auto& e : std::filesystem::directory_iterator(spec, ec))
      if (e.path().extension() == ".bin" && e.path().filename().string()[0] != '.') files.push_back(e.path());
  } else {
    files.emplace_back(spec);  // (TokenShard says when it is missing)
  }
  std::sort(files.begin(), files.end());
  INGOT_CHECK_AS(!files.empty(), InputError, "{}: {} names no shard file (a file, a folder of *.bin files or a glob)",
                 key, spec);
  return files;
}

void write_token_shard(const std::filesystem::path& file, std::span<const int32_t> ids, int64_t vocab_size) {
  INGOT_CHECK_AS(vocab_size >= 1 && vocab_size <= kMaxVocab, InputError, "{}: vocabulary of {} ids", file.string(),
                 vocab_size);
  INGOT_CHECK_AS(ids.size() <= static_cast<size_t>(kMaxVocab), InputError,
                 "{}: {} tokens, more than the 2^31 - 1 a shard's header counts: write several shards", file.string(),
                 ids.size());
  const bool narrow = vocab_size <= 65536;
  int32_t header[kShardHeaderInts] = {};
  header[0] = narrow ? kShardMagicU16 : kShardMagicU32;
  header[1] = narrow ? 1 : 7;  // llm.c's versions of the two layouts
  header[2] = static_cast<int32_t>(ids.size());
  io::atomic_write(file, [&](io::ByteSink& out) {
    out.write(header, sizeof header);
    std::vector<unsigned char> buf;
    constexpr size_t kChunk = size_t{1} << 20;
    for (size_t begin = 0; begin < ids.size(); begin += kChunk) {
      const size_t n = std::min(kChunk, ids.size() - begin);
      buf.resize(n * (narrow ? 2 : 4));
      for (size_t i = 0; i < n; ++i) {
        const int32_t id = ids[begin + i];
        INGOT_CHECK_AS(id >= 0 && id < vocab_size, InputError, "{}: token {} at {} is outside [0, {})", file.string(),
                       id, begin + i, vocab_size);
        if (narrow) {
          const auto v = static_cast<uint16_t>(id);
          std::memcpy(buf.data() + i * 2, &v, 2);
        } else {
          const auto v = static_cast<uint32_t>(id);
          std::memcpy(buf.data() + i * 4, &v, 4);
        }
      }
      out.write(buf.data(), buf.size());
    }
  });
}

TokensOptions tokens_options(const YAML::Node& section, const std::string& file) {
  TokensOptions o;
  const bool map = section && section.IsMap();
  for (const char* key : {"train", "test", "vocab_size"})
    INGOT_CHECK_AS(map && section[key], ConfigError,
                   "{}: data.tokens.{} is required: data.tokens: {{train: DIR/train_*.bin, test: DIR/test_*.bin, "
                   "vocab_size: V}} (ingot tokenize writes such shards and prints these keys)",
                   map ? config::where(file, section) : file, key);
  o.train = section["train"].Scalar();
  o.test = section["test"].Scalar();
  o.vocab_size = section["vocab_size"].as<int64_t>();
  if (section["block_size"]) o.block_size = section["block_size"].as<int64_t>();
  return o;
}

DatasetSplits tokens_datasets(const TokensOptions& o) {
  const auto open = [](const std::string& spec, const char* key) {
    std::vector<std::shared_ptr<const TokenShard>> shards;
    for (const auto& f : shard_files(spec, key)) shards.push_back(std::make_shared<const TokenShard>(f));
    return shards;
  };
  DatasetSplits splits;
  splits.train = std::make_shared<ShardWindows>(open(o.train, "data.tokens.train"), o.block_size, o.vocab_size);
  splits.test = std::make_shared<ShardWindows>(open(o.test, "data.tokens.test"), o.block_size, o.vocab_size);
  return splits;
}

void register_tokens_dataset(DatasetRegistry& registry) {
  config::Schema keys;
  keys.string("train").string("test").integer("block_size", 1, 1 << 20).integer("vocab_size", 1,
                                                                                static_cast<double>(kMaxVocab));
  registry.add({"tokens", std::move(keys),
                [](const YAML::Node& section, const std::string& file, const DataConfig&, uint64_t) {
                  return tokens_datasets(tokens_options(section, file));
                },
                "llm.c token shards (uint16 or uint32 tokens, memory-mapped) as windows of block_size + 1 tokens "
                "for next-token prediction (data.tokens: train, test, block_size, vocab_size)"});
}

}  // namespace ingot::data
