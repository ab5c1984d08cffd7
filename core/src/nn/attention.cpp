// MultiheadAttention: the head split is a view (reshape + permute) the attention op reads with
// its strides; heads are merged back by one copy before c_proj. Children are looked up by name on
// each call, so a layer swapped by replace_child (quantization's int8 Linear) is the one that runs.
#include "ingot/nn/attention.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <tuple>
#include <typeinfo>

#include "ingot/base/error.h"
#include "ingot/base/grad_mode.h"
#include "ingot/ops/creation.h"
#include "ingot/ops/dropout.h"
#include "ingot/ops/elementwise.h"
#include "ingot/ops/indexing.h"
#include "ingot/ops/linalg.h"

namespace ingot::nn {

MultiheadAttention::MultiheadAttention(const AttentionConfig& config, Generator* gen, Generator* dropout_gen)
    : Module("MultiheadAttention"), config_(config), dropout_gen_(dropout_gen) {
  INGOT_CHECK_SHAPE(config_.dim >= 1 && config_.heads >= 1 && config_.dim % config_.heads == 0,
                    "MultiheadAttention: dim {} must be a positive multiple of heads {}", config_.dim, config_.heads);
  INGOT_CHECK(config_.dropout >= 0.0 && config_.dropout < 1.0, "MultiheadAttention: dropout {} is not in [0, 1)",
              config_.dropout);
  INGOT_CHECK_SHAPE(!config_.rotary || (config_.dim / config_.heads) % 2 == 0,
                    "MultiheadAttention: rotary embeddings need an even head size, got {}",
                    config_.dim / config_.heads);
  register_module("c_attn", std::make_shared<Linear>(config_.dim, 3 * config_.dim, config_.bias, gen));
  register_module("c_proj", std::make_shared<Linear>(config_.dim, config_.dim, config_.bias, gen));
}

std::pair<Tensor, Tensor> KvCache::append(const Tensor& k_new, const Tensor& v_new) {
  const NoGradGuard no_grad;
  const int64_t t = k_new.size(2), need = filled + t;
  const auto grow = [&](Tensor& buf, const Tensor& like) {
    const int64_t cap = buf.defined() ? buf.size(2) : 0;
    if (need <= cap) return;
    Shape shape = like.shape();
    shape[2] = std::max<int64_t>({need, 2 * cap, 16});
    Tensor bigger = zeros(shape, like.dtype(), like.device());
    if (filled > 0) bigger.slice(2, 0, filled).copy_(buf.slice(2, 0, filled));
    buf = bigger;
  };
  grow(k, k_new);
  grow(v, v_new);
  k.slice(2, filled, need).copy_(k_new);
  v.slice(2, filled, need).copy_(v_new);
  filled = need;
  return {k.slice(2, 0, filled), v.slice(2, 0, filled)};
}

Tensor MultiheadAttention::forward(const Tensor& x) { return attend(x, Tensor()); }

MultiheadAttention::Rotation MultiheadAttention::rotation(int64_t t, int64_t offset, DType dtype,
                                                          Device device) const {
  const int64_t d = config_.dim / config_.heads, half = d / 2;
  // theta_i = base^(-2i / D); angle = position * theta_i, the same for both halves.
  const Tensor pos = arange(static_cast<double>(offset), static_cast<double>(offset + t), 1.0, DType::F32, device);
  const Tensor inv = exp(arange(0.0, static_cast<double>(half), 1.0, DType::F32, device) *
                         (-2.0 * std::log(config_.rotary_base) / static_cast<double>(d)));
  const Tensor angle = pos.reshape(Shape{t, 1}) * inv.reshape(Shape{1, half});
  const Tensor full = concat({angle, angle}, 1);  // [T, D]
  return {cos(full).to(dtype), sin(full).to(dtype)};
}

Tensor MultiheadAttention::rotate(const Tensor& x, const Rotation& r) {
  const int64_t d = x.size(3), half = d / 2;
  const Tensor rotated = concat({-x.slice(3, half, d), x.slice(3, 0, half)}, 3);
  return x * r.cos + rotated * r.sin;
}

Tensor MultiheadAttention::attend(const Tensor& x, const Tensor& mask, KvCache* cache) {
  INGOT_CHECK_SHAPE(x.dim() == 3 && x.size(2) == config_.dim, "MultiheadAttention({}): input {} must be [B, T, {}]",
                    config_.dim, x.shape().str(), config_.dim);
  const int64_t b = x.size(0), t = x.size(1), h = config_.heads, c = config_.dim, d = c / h;
  // [B, T, C] -> [B, H, T, D] as a strided view the attention op reads in place
  const auto heads = [&](const Tensor& y) { return y.reshape(Shape{b, t, h, d}).permute({0, 2, 1, 3}); };
  const ModulePtr c_attn = get_submodule("c_attn");
  Tensor q, k, v;
  if (typeid(*c_attn) == typeid(Linear) && !c_attn->runs_alone() && GradMode::is_enabled()) {
    // Training: q, k and v from the rows of c_attn's weight, so that backward gets three [B, T, C]
    // gradients instead of three zero-filled [B, T, 3C] ones (a slice's gradient) to add up.
    const auto& lin = static_cast<const Linear&>(*c_attn);
    const Tensor w = lin.weight(), bias = lin.bias();
    const auto part = [&](int64_t i) {
      return linear(x, w.slice(0, i * c, (i + 1) * c), bias.defined() ? bias.slice(0, i * c, (i + 1) * c) : Tensor());
    };
    q = heads(part(0));
    k = heads(part(1));
    v = heads(part(2));
  } else {  // one projection (a quantized or hooked c_attn, or no graph to record): [B, T, 3C] split
    const Tensor qkv = (*c_attn)(x);
    q = heads(qkv.slice(2, 0, c));
    k = heads(qkv.slice(2, c, 2 * c));
    v = heads(qkv.slice(2, 2 * c, 3 * c));
  }
  const int64_t past = cache != nullptr ? cache->length() : 0;
  if (config_.rotary) {  // (one table for q and k)
    const Rotation r = rotation(t, past, q.dtype(), q.device());
    q = rotate(q, r);
    k = rotate(k, r);
  }
  if (cache != nullptr) std::tie(k, v) = cache->append(k, v);
  AttentionOptions o;
  // With a cache the queries are the last t of past + t positions: the lower-right causal mask.
  o.causal = !config_.causal ? CausalMask::None : past > 0 ? CausalMask::LowerRight : CausalMask::UpperLeft;
  o.mask = mask;
  o.dropout_p = is_training() ? config_.dropout : 0.0;
  o.gen = dropout_gen_;
  const Tensor y = scaled_dot_product_attention(q, k, v, o);  // [B, H, T, D]
  const Tensor merged = y.permute({0, 2, 1, 3}).reshape(Shape{b, t, config_.dim});
  return dropout((*get_submodule("c_proj"))(merged), config_.dropout, is_training(), dropout_gen_);
}

Shape MultiheadAttention::output_shape(const Shape& input) const {
  INGOT_CHECK_SHAPE(input.size() == 3 && input[2] == config_.dim,
                    "MultiheadAttention({}) expects [B, T, {}], the input is {}", config_.dim, config_.dim,
                    input.str());
  return input;
}

std::string MultiheadAttention::extra_repr() const {
  return fmt::format("dim={}, heads={}, causal={}, rotary={}, dropout={}", config_.dim, config_.heads,
                     py_bool(config_.causal), py_bool(config_.rotary), config_.dropout);
}

}  // namespace ingot::nn
