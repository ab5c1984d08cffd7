// The SentencePiece tokenizer (Debian's libsentencepiece): a BPE or unigram model trained on a
// corpus, deterministically, and kept as the model file SentencePiece itself reads (spm_encode,
// Python's sentencepiece), so the run folder holds what reproduces its token ids.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "ingot/data/tokenizer.h"

namespace ingot::data {

/// What a SentencePiece model is trained with (`data.text.tokenizer: {type: sentencepiece, ...}`).
struct SentencePieceOptions {
  int64_t vocab_size = 0;           ///< pieces, the three specials (<unk> 0, <s> 1, </s> 2) included
  std::string model_type = "bpe";   ///< bpe | unigram
  double character_coverage = 1.0;  ///< share of the corpus's characters that get a piece of their own
};

/// Trains a model on `corpus` (its lines are the sentences): the same corpus and options give the
/// same model, byte for byte (one thread, a fixed seed). The text is taken as it is (no Unicode
/// normalisation, spaces and newlines kept), so decode(encode(text)) == text for any text made of
/// the corpus's characters; others encode to <unk>. `key` names the options in messages
/// ("data.text.tokenizer", "--sentencepiece-vocab"): ConfigError naming `key`.vocab_size, with the
/// size that would fit, when the corpus cannot give that many pieces or needs more.
std::unique_ptr<Tokenizer> train_sentencepiece(std::string_view corpus, const SentencePieceOptions& options,
                                               const std::string& key);

/// The model saved in `file` (Tokenizer::serialized_model of one trained here, or any SentencePiece
/// .model). InputError naming the file when it is missing or not a SentencePiece model.
std::unique_ptr<Tokenizer> load_sentencepiece(const std::filesystem::path& file);

}  // namespace ingot::data
