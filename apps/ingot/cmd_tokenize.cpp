// `ingot tokenize CORPUS -o DIR [--tokenizer byte | --sentencepiece-vocab N] [--shard-tokens N]
// [--test-fraction F] [--force]`: a text corpus (file, folder or kjv) to llm.c token shards for the
// `tokens` dataset — train_NNNNNN.bin and test_NNNNNN.bin, each written atomically, and the
// SentencePiece model (tokenizer.model) when one is trained — printing each file and the data:
// section that reads them.
#include <boost/program_options.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <span>

#include "cli.h"
#include "ingot/base/error.h"
#include "ingot/data/sentencepiece_tokenizer.h"
#include "ingot/data/text_dataset.h"
#include "ingot/data/tokenizer.h"
#include "ingot/data/tokens_dataset.h"
#include "ingot/io/atomic_write.h"

namespace po = boost::program_options;

namespace ingot::cli {
namespace {

/// The shards (train_*.bin, test_*.bin) already in `dir`, sorted.
std::vector<std::filesystem::path> existing_shards(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if ((name.starts_with("train_") || name.starts_with("test_")) && name.ends_with(".bin")) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// Writes `ids` as ceil(size / most) shards of nearly equal length (so that none is a short tail
/// that holds less than a window), named <prefix>_NNNNNN.bin; returns their paths.
std::vector<std::filesystem::path> write_shards(const std::filesystem::path& dir, const std::string& prefix,
                                                std::span<const int32_t> ids, int64_t most, int64_t vocab) {
  const auto n = static_cast<int64_t>(ids.size());
  const int64_t count = std::max<int64_t>(1, (n + most - 1) / most);
  std::vector<std::filesystem::path> files;
  for (int64_t k = 0; k < count; ++k) {
    if (interrupted()) throw InputError("interrupted: the shards written so far are whole; run again to finish");
    const int64_t begin = n * k / count, end = n * (k + 1) / count;
    const std::filesystem::path file = dir / fmt::format("{}_{:06d}.bin", prefix, k);
    data::write_token_shard(file, ids.subspan(begin, end - begin), vocab);
    std::cout << fmt::format("wrote {}: {} tokens ({})\n", file.string(), end - begin,
                             vocab <= 65536 ? "uint16" : "uint32");
    files.push_back(file);
  }
  return files;
}

}  // namespace

int cmd_tokenize(const std::vector<std::string>& args) {
  po::options_description opts("ingot tokenize");
  opts.add_options()("output,o", po::value<std::string>(), "folder for the shards (created if missing; required)")(
      "tokenizer", po::value<std::string>(), "byte (the default): one token per UTF-8 byte, 256 ids")(
      "sentencepiece-vocab", po::value<int64_t>(), "train a SentencePiece model of N pieces on the corpus instead")(
      "model-type", po::value<std::string>()->default_value("bpe"), "the SentencePiece model: bpe or unigram")(
      "shard-tokens", po::value<int64_t>()->default_value(100000000), "tokens per shard at most")(
      "test-fraction", po::value<double>()->default_value(0.1), "the last share of the tokens, for the test shards")(
      "force", "replace the shards (and tokenizer.model) already in the folder")("help,h", "show this help");
  po::options_description hidden;
  hidden.add_options()("corpus", po::value<std::string>());
  po::options_description all;
  all.add(opts).add(hidden);
  po::positional_options_description pos;
  pos.add("corpus", 1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
  po::notify(vm);
  constexpr const char* kUsage =
      "usage: ingot tokenize CORPUS.txt|FOLDER|kjv -o DIR [--tokenizer byte | --sentencepiece-vocab N "
      "[--model-type bpe|unigram]] [--shard-tokens N] [--test-fraction F] [--force]";
  if (vm.count("help")) {
    std::cout << kUsage << "\n\n" << opts;
    return 0;
  }
  if (!vm.count("corpus") || !vm.count("output")) throw ConfigError(kUsage);
  if (vm.count("tokenizer") && vm["tokenizer"].as<std::string>() != "byte")
    throw ConfigError(fmt::format("--tokenizer {}: valid: byte (for SentencePiece give --sentencepiece-vocab N)",
                                  vm["tokenizer"].as<std::string>()));
  const bool sentencepiece = vm.count("sentencepiece-vocab") > 0;
  if (sentencepiece && vm.count("tokenizer"))
    throw ConfigError("--tokenizer byte and --sentencepiece-vocab: give one of them");
  const int64_t shard_tokens = vm["shard-tokens"].as<int64_t>();
  if (shard_tokens < 1 || shard_tokens > (int64_t{1} << 31) - 1)
    throw ConfigError(fmt::format("--shard-tokens {}: must lie in [1, 2^31 - 1] (a shard's header counts in int32)",
                                  shard_tokens));
  const double test_fraction = vm["test-fraction"].as<double>();
  if (!(test_fraction > 0.0 && test_fraction < 1.0))
    throw ConfigError(fmt::format("--test-fraction {}: must lie between 0 and 1 (exclusive)", test_fraction));

  const std::filesystem::path dir(vm["output"].as<std::string>());
  std::filesystem::create_directories(dir);
  const std::vector<std::filesystem::path> before = existing_shards(dir);
  if (!vm.count("force") && (!before.empty() || std::filesystem::exists(dir / "tokenizer.model")))
    throw InputError(fmt::format("{} already holds shards ({}): pass --force to replace them, or choose another -o",
                                 dir.string(), before.empty() ? "tokenizer.model" : before[0].filename().string() + ", ..."));

  const std::string corpus = data::read_corpus(vm["corpus"].as<std::string>());
  std::unique_ptr<data::Tokenizer> tokenizer;
  if (sentencepiece) {
    const data::SentencePieceOptions o{vm["sentencepiece-vocab"].as<int64_t>(), vm["model-type"].as<std::string>()};
    std::cout << fmt::format("training a SentencePiece {} model of {} pieces on {} bytes\n", o.model_type,
                             o.vocab_size, corpus.size())
              << std::flush;
    tokenizer = data::train_sentencepiece(corpus, o, "--sentencepiece-vocab");
    io::atomic_write(dir / "tokenizer.model", tokenizer->serialized_model());
    std::cout << fmt::format("wrote {}: the SentencePiece model ({} pieces)\n", (dir / "tokenizer.model").string(),
                             tokenizer->vocab_size());
  } else {
    tokenizer = data::byte_tokenizer();
    if (std::filesystem::remove(dir / "tokenizer.model"))  // (--force: the shards no longer follow it)
      std::cout << fmt::format("removed {} (left from before)\n", (dir / "tokenizer.model").string());
  }
  const std::vector<int32_t> ids = tokenizer->encode(corpus);
  const auto n = static_cast<int64_t>(ids.size());
  const int64_t split = n - std::llround(test_fraction * static_cast<double>(n));
  if (split < 2 || n - split < 2)
    throw InputError(fmt::format("{}: {} tokens, too few for a train and a test part (--test-fraction {})",
                                 vm["corpus"].as<std::string>(), n, test_fraction));
  const std::span<const int32_t> all_ids(ids);
  const int64_t vocab = tokenizer->vocab_size();
  std::vector<std::filesystem::path> written = write_shards(dir, "train", all_ids.first(split), shard_tokens, vocab);
  for (const auto& f : write_shards(dir, "test", all_ids.subspan(split), shard_tokens, vocab)) written.push_back(f);
  for (const auto& old : before)  // shards of an earlier, longer tokenization would join the globs
    if (std::find(written.begin(), written.end(), old) == written.end()) {
      std::filesystem::remove(old);
      std::cout << fmt::format("removed {} (left from before)\n", old.string());
    }
  std::cout << fmt::format("{} tokens ({} train, {} test), vocabulary {}; read them with\n"
                           "data: {{dataset: tokens, tokens: {{train: \"{}\", test: \"{}\", vocab_size: {}}}}}\n",
                           n, split, n - split, vocab, (dir / "train_*.bin").string(), (dir / "test_*.bin").string(),
                           vocab);
  return 0;
}

}  // namespace ingot::cli
