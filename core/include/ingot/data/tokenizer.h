// Tokenizers: text to token ids and back. `byte` maps each UTF-8 byte to its value (256 ids, no
// file to keep); a SentencePiece model (BPE or unigram) is trained on the corpus
// (sentencepiece_tokenizer.h) and kept as a file.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ingot::data {

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  /// "byte" or "sentencepiece".
  virtual std::string type() const = 0;
  virtual int64_t vocab_size() const = 0;
  virtual std::vector<int32_t> encode(std::string_view text) const = 0;
  /// Ids outside [0, vocab_size) throw InputError. Bytes of a multi-byte character cut at the end
  /// decode to U+FFFD.
  virtual std::string decode(std::span<const int32_t> ids) const = 0;
  /// The bytes of the file that restores this tokenizer (a SentencePiece .model), or "" when
  /// there is nothing to keep (byte).
  virtual std::string serialized_model() const { return {}; }
};

/// The byte tokenizer: id = byte value.
std::unique_ptr<Tokenizer> byte_tokenizer();

/// The offset of the first byte of `text` that does not start or continue a well-formed UTF-8
/// character (overlong forms, surrogates and values past U+10FFFF included), or npos.
size_t invalid_utf8_at(std::string_view text);

/// `text` with every ill-formed UTF-8 sequence replaced by U+FFFD (what decode gives a sampled
/// sequence that ends inside a character).
std::string replace_invalid_utf8(std::string_view text);

}  // namespace ingot::data
