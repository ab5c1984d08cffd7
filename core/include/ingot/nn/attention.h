// MultiheadAttention: self-attention over [B, T, C] as GPT-2 writes it — one projection to q, k
// and v (c_attn, C -> 3C), the fused scaled dot-product attention per head, an output projection
// (c_proj) and its dropout — optionally with rotary position embeddings on q and k (RoFormer,
// GPT-NeoX's rotate-half form). State-dict names: c_attn.weight/bias, c_proj.weight/bias.
#pragma once

#include <memory>

#include "ingot/nn/linear.h"
#include "ingot/nn/module.h"
#include "ingot/ops/attention.h"
#include "ingot/ops/random.h"

namespace ingot::nn {

struct AttentionConfig {
  int64_t dim = 0;
  int64_t heads = 1;
  bool bias = true;
  double dropout = 0.0;  ///< on the attention probabilities and after c_proj (training only)
  bool causal = true;    ///< a decoder's mask: position t sees positions <= t
  bool rotary = false;   ///< rotate q and k by position (then no learned position embedding is needed)
  double rotary_base = 10000.0;
};

/// A key/value cache of one attention layer for incremental decoding: buffers [B, H, capacity, D]
/// whose first length() positions hold the keys and values so far. Appending writes in place
/// (the capacity doubles when full), so a step copies only its own keys, not the whole past.
/// Gradients do not flow through the cache.
struct KvCache {
  Tensor k, v;
  int64_t filled = 0;
  int64_t length() const { return filled; }
  /// Appends k_new, v_new [B, H, T, D]; returns the keys and values of every position so far.
  std::pair<Tensor, Tensor> append(const Tensor& k_new, const Tensor& v_new);
};

class MultiheadAttention : public Module {
 public:
  explicit MultiheadAttention(const AttentionConfig& config, Generator* gen = nullptr, Generator* dropout_gen = nullptr);
  /// x [B, T, C] -> [B, T, C].
  Tensor forward(const Tensor& x) override;
  /// With an optional mask broadcastable to [B, H, T, T] (bool: true = attend, e.g. a padding
  /// mask [B, 1, 1, T]); `cache`, when given, holds the keys and values of the positions before
  /// x (the new ones are appended): x's queries see them all, and themselves causally.
  Tensor attend(const Tensor& x, const Tensor& mask, KvCache* cache = nullptr);
  Shape output_shape(const Shape& input) const override;
  std::string extra_repr() const override;

  const AttentionConfig& config() const { return config_; }
  /// The generator of the attention and output dropouts (the run's).
  void set_generator(Generator* gen) { dropout_gen_ = gen; }

 private:
  /// cos and sin [T, D] of the rotation angles of positions offset .. offset + T - 1.
  struct Rotation {
    Tensor cos, sin;
  };
  Rotation rotation(int64_t t, int64_t offset, DType dtype, Device device) const;
  /// [B, H, T, D] rotated by `r`.
  static Tensor rotate(const Tensor& x, const Rotation& r);

  AttentionConfig config_;
  Generator* dropout_gen_;
};

}  // namespace ingot::nn
