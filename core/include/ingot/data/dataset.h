// Dataset: the interface the DataLoader reads samples through, and the in-memory image
// classification dataset (images normalised once at load into one f32 buffer, labels int64).
// A sample is f32 values with one class label (images, table rows, arrays), or int64 token ids
// with one target per position or per sequence (text).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ingot/data/token_masking.h"
#include "ingot/tensor/tensor.h"

namespace ingot::data {

/// The ids a dataset of token sequences adds after its tokenizer's (-1: none): what pads a short
/// sequence, opens and closes one, and stands for a masked token (BERT's [PAD], [CLS], [SEP],
/// [MASK]).
struct SpecialTokens {
  int64_t pad = -1, cls = -1, sep = -1, mask = -1;
  int64_t ordinary = 0;  ///< ids below this are the tokenizer's own
};

/// The four special tokens placed after a tokenizer of `vocab` ids: [PAD] = vocab, [CLS] = vocab
/// + 1, [SEP] = vocab + 2, [MASK] = vocab + 3 (so the model's vocabulary is vocab + 4).
inline SpecialTokens special_tokens_after(int64_t vocab) { return {vocab, vocab + 1, vocab + 2, vocab + 3, vocab}; }
inline constexpr int64_t kSpecialTokenCount = 4;

/// A map-style dataset. Implementations are read-only after construction: `read` and `read_ids`
/// are called from several loader workers at once.
class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual int64_t size() const = 0;
  /// Shape of one sample's input: [C, H, W] for f32 samples, [T] for token ids.
  virtual Shape sample_shape() const = 0;
  /// Classes of a label, or the vocabulary size of a token target.
  virtual int64_t num_classes() const = 0;
  /// Copies sample `index`'s input (C*H*W floats, already normalised) to `image` and returns its
  /// label. Byte work only; thread-safe. f32 datasets only.
  virtual int64_t read(int64_t index, float* image) const = 0;
  /// The value of a black (zero) pixel of `channel` after normalisation: what padding adds.
  virtual float pad_value(int64_t channel) const = 0;
  /// Sample `index` as the loader reads it in `epoch` of a run seeded `seed`: a dataset whose
  /// samples are drawn while they are read (random transforms) keys its draws by the three; the
  /// others return read(). Thread-safe.
  virtual int64_t read_sample(int64_t index, uint64_t seed, int64_t epoch, float* image) const {
    (void)seed;
    (void)epoch;
    return read(index, image);
  }
  /// Reads that gave another sample in place of a bad one (a dataset that skips bad files).
  virtual int64_t skipped_samples() const { return 0; }
  /// True when a read decodes the sample from disk (memory does not grow with the dataset).
  virtual bool streamed() const { return false; }

  /// F32 (read) or I64 (token ids, read_ids).
  virtual DType input_dtype() const { return DType::F32; }
  /// One sample's target: [] (a class label) or [T] (a token per position, a language model's).
  virtual Shape target_shape() const { return {}; }
  /// Copies sample `index`'s token ids (sample_numel() of them) to `input` and its targets
  /// (target_shape().numel(), at least 1) to `target`. I64 datasets only; thread-safe.
  virtual void read_ids(int64_t index, int64_t* input, int64_t* target) const;
  /// Token datasets: the ids a model's embedding must hold (the tokenizer's and the special
  /// tokens); 0 for f32 datasets.
  virtual int64_t vocab_size() const { return 0; }
  /// Token datasets: the special ids. With a pad id, sequences are padded to sample_shape()'s
  /// length by read_ids, and the loader trims every batch to its longest sequence.
  virtual SpecialTokens special_tokens() const { return {}; }
  /// The masked-language-model objective the loader applies to each sample's ids (the sample's
  /// targets are then its ids before masking), or none.
  virtual std::optional<TokenMasking> masking() const { return std::nullopt; }

  int64_t sample_numel() const { return sample_shape().numel(); }
};

/// Base of the datasets of token ids: `read` and `pad_value` (f32 samples) refuse.
class TokenDataset : public Dataset {
 public:
  DType input_dtype() const override { return DType::I64; }
  /// A language model's: its classes are the vocabulary (a classifier of sequences overrides it).
  int64_t vocab_size() const override { return num_classes(); }
  int64_t read(int64_t index, float* image) const override;
  float pad_value(int64_t channel) const override;
};

/// Per-pixel normalisation applied once at load: (x / 255 - mean) / std, in float like
/// torchvision's ToTensor + Normalize. A single value or one per channel.
struct Normalize {
  std::vector<float> mean{0.0f};
  std::vector<float> std{1.0f};
};

/// Applies `normalize` in place to `values`, N samples of `sample` = [C, H, W] floats: (x - mean) /
/// std per channel (empty mean or std: 0 or 1). ConfigError naming `source` when mean or std has
/// neither one value nor one per channel.
void normalize_samples(std::vector<float>& values, const Shape& sample, const Normalize& normalize,
                       const std::string& source);

/// Samples held in memory: `images` f32 [N, C, H, W] (normalised), `labels` i64 [N].
class InMemoryDataset final : public Dataset {
 public:
  /// Takes the tensors as they are; `pad_values` has one entry per channel (or one for all).
  InMemoryDataset(Tensor images, Tensor labels, int64_t num_classes, std::vector<float> pad_values = {0.0f});
  /// Normalises unsigned-byte images [N, H, W] (C = 1) or [N, C, H, W] once; checks that labels
  /// [N] lie in [0, num_classes). `source` names the data in error messages (file paths).
  static InMemoryDataset from_bytes(const std::vector<uint8_t>& images, const std::vector<int64_t>& image_dims,
                                    const std::vector<uint8_t>& labels, const std::vector<int64_t>& label_dims,
                                    int64_t num_classes, const Normalize& normalize, const std::string& source);

  int64_t size() const override { return images_.size(0); }
  Shape sample_shape() const override;
  int64_t num_classes() const override { return num_classes_; }
  int64_t read(int64_t index, float* image) const override;
  float pad_value(int64_t channel) const override;

  /// The whole normalised set, e.g. to evaluate in one pass.
  const Tensor& images() const { return images_; }
  const Tensor& labels() const { return labels_; }

 private:
  Tensor images_;
  Tensor labels_;
  int64_t num_classes_;
  std::vector<float> pad_values_;
};

}  // namespace ingot::data
