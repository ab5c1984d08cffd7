// The SentencePiece tokenizer: training through SentencePieceTrainer on the corpus's lines (in
// memory, no temporary file), loading a saved model, and encode / decode with SentencePiece's ids
// as they are. The library's headers stay in this file.
#include "ingot/data/sentencepiece_tokenizer.h"

#include <fmt/format.h>
#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "ingot/base/error.h"
#include "ingot/base/input_file.h"

namespace ingot::data {
namespace {

// SentencePiece skips a training sentence longer than its max_sentence_length: longer lines are
// cut (at a space when there is one) so that every byte of the corpus counts.
constexpr size_t kMaxSentenceBytes = 8192;
// Past this many lines the trainer samples (reservoir, seeded): its memory is the sentences it keeps.
constexpr int64_t kMaxSentences = int64_t{1} << 21;
constexpr uint64_t kMaxModelBytes = uint64_t{1} << 30;
// Encoding in pieces of about this size, cut after a newline: no trained piece spans a newline
// (sentences end at one), so the ids are those of the whole text, with a bounded working set.
constexpr size_t kEncodeChunkBytes = size_t{1} << 20;

/// The corpus's lines, each with its newline, as SentencePiece's training sentences.
class LineIterator final : public sentencepiece::SentenceIterator {
 public:
  explicit LineIterator(std::string_view text) : text_(text) { Next(); }
  bool done() const override { return done_; }
  void Next() override {
    if (pos_ >= text_.size()) {
      done_ = true;
      return;
    }
    size_t end = text_.find('\n', pos_);
    end = end == std::string_view::npos ? text_.size() : end + 1;
    if (end - pos_ > kMaxSentenceBytes) {
      end = pos_ + kMaxSentenceBytes;
      while (end > pos_ && (static_cast<unsigned char>(text_[end]) & 0xC0) == 0x80) --end;  // a whole character
      const size_t space = text_.rfind(' ', end - 1);
      if (space != std::string_view::npos && space > pos_) end = space;
      if (end == pos_) end = pos_ + kMaxSentenceBytes;  // (not UTF-8: cut anywhere rather than stall)
    }
    value_.assign(text_.substr(pos_, end - pos_));
    pos_ = end;
  }
  const std::string& value() const override { return value_; }
  sentencepiece::util::Status status() const override { return {}; }

 private:
  std::string_view text_;
  size_t pos_ = 0;
  std::string value_;
  bool done_ = false;
};

/// The number after `marker` in SentencePiece's message, or -1.
int64_t number_after(const std::string& message, std::string_view marker) {
  const size_t at = message.find(marker);
  if (at == std::string::npos) return -1;
  size_t i = at + marker.size();
  int64_t n = 0;
  bool any = false;
  for (; i < message.size() && message[i] >= '0' && message[i] <= '9'; ++i, any = true) n = n * 10 + (message[i] - '0');
  return any ? n : -1;
}

class SentencePieceTokenizer final : public Tokenizer {
 public:
  /// `source` names the model in messages.
  SentencePieceTokenizer(std::string model, const std::string& source) : model_(std::move(model)) {
    const auto status = sp_.LoadFromSerializedProto(model_);
    if (!status.ok())
      throw InputError(fmt::format("{}: not a SentencePiece model ({}): train it again (delete the file and rerun, "
                                   "or ingot tokenize --sentencepiece-vocab N)",
                                   source, status.ToString()));
  }
  std::string type() const override { return "sentencepiece"; }
  int64_t vocab_size() const override { return sp_.GetPieceSize(); }
  std::vector<int32_t> encode(std::string_view text) const override {
    std::vector<int32_t> ids;
    std::vector<int> chunk;
    for (size_t pos = 0; pos < text.size();) {
      size_t end = pos + kEncodeChunkBytes >= text.size() ? text.size() : text.find('\n', pos + kEncodeChunkBytes);
      end = end == std::string_view::npos ? text.size() : end + (end < text.size() ? 1 : 0);
      const auto status = sp_.Encode(absl::string_view(text.data() + pos, end - pos), &chunk);
      INGOT_CHECK_AS(status.ok(), InputError, "sentencepiece: cannot encode the text: {}", status.ToString());
      ids.insert(ids.end(), chunk.begin(), chunk.end());
      pos = end;
    }
    return ids;
  }
  std::string decode(std::span<const int32_t> ids) const override {
    const int64_t n = vocab_size();
    for (const int32_t id : ids)
      INGOT_CHECK_AS(id >= 0 && id < n, InputError, "sentencepiece tokenizer: token id {} is outside [0, {})", id, n);
    std::string text;
    const auto status = sp_.Decode(std::vector<int>(ids.begin(), ids.end()), &text);
    INGOT_CHECK_AS(status.ok(), InputError, "sentencepiece: cannot decode: {}", status.ToString());
    return text;
  }
  std::string serialized_model() const override { return model_; }

 private:
  std::string model_;
  sentencepiece::SentencePieceProcessor sp_;
};

}  // namespace

std::unique_ptr<Tokenizer> train_sentencepiece(std::string_view corpus, const SentencePieceOptions& o,
                                               const std::string& vocab_key) {
  INGOT_CHECK_AS(o.model_type == "bpe" || o.model_type == "unigram", ConfigError,
                 "sentencepiece: model_type '{}' is not known; valid: bpe, unigram", o.model_type);
  const std::unordered_map<std::string, std::string> args{
      {"vocab_size", std::to_string(o.vocab_size)},
      {"model_type", o.model_type},
      {"character_coverage", fmt::format("{}", o.character_coverage)},
      // The text as it is: no NFKC, spaces kept, no space added in front (a prompt encodes as the
      // same text does inside the corpus).
      {"normalization_rule_name", "identity"},
      {"remove_extra_whitespaces", "false"},
      {"add_dummy_prefix", "false"},
      {"max_sentence_length", std::to_string(kMaxSentenceBytes)},
      {"input_sentence_size", std::to_string(kMaxSentences)},
      {"shuffle_input_sentence", "true"},
      // Determinism: one thread (the trainer's sums do not depend on a split) and a fixed seed.
      {"num_threads", "1"},
      {"minloglevel", "2"}};  // its progress lines would bury the run's
  std::string model;
  {
    static std::mutex training;  // the seed and the trainer's flags are process-wide
    const std::lock_guard<std::mutex> lock(training);
    sentencepiece::SetRandomGeneratorSeed(20240520);
    LineIterator lines(corpus);
    const auto status = sentencepiece::SentencePieceTrainer::Train(args, &lines, &model);
    if (!status.ok()) {
      const std::string why = status.ToString();
      if (const int64_t most = number_after(why, "set it to a value <= "); most >= 0)
        throw ConfigError(fmt::format("{}: {} is more pieces than this corpus gives a {} model (at most {}): lower "
                                      "{} to {} or less, or train on a longer corpus",
                                      vocab_key, o.vocab_size, o.model_type, most, vocab_key, most));
      if (const int64_t need = number_after(why, fmt::format("{} vs ", o.vocab_size)); need >= 0)
        throw ConfigError(fmt::format("{}: {} is fewer pieces than the corpus needs ({}: its characters at "
                                      "character_coverage {} and the 3 specials <unk>, <s>, </s>): raise {} to {} or "
                                      "more, or lower character_coverage",
                                      vocab_key, o.vocab_size, need, o.character_coverage, vocab_key, need));
      throw InputError(fmt::format("sentencepiece: training a {} model of {} pieces failed: {}", o.model_type,
                                   o.vocab_size, why));
    }
  }
  return std::make_unique<SentencePieceTokenizer>(std::move(model), "the trained model");
}

std::unique_ptr<Tokenizer> load_sentencepiece(const std::filesystem::path& file) {
  return std::make_unique<SentencePieceTokenizer>(read_file(file, kMaxModelBytes, "a SentencePiece model"),
                                                  file.string());
}

}  // namespace ingot::data
