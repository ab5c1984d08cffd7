// ONNX nodes for the transformer layers, with the sequence length T left dynamic: T is read from
// the input at run time (Shape), so that one file runs any T up to the recorded one (the block
// size). Attention is decomposed for opset 17: MatMul(q, k^T) * scale, the causal mask (Trilu of
// a [T, T] matrix, Where), Softmax, MatMul with v; rotary tables are [block, D] constants sliced
// to T. Every Reshape copies N and T (0) rather than naming them.
#include "onnx_transformer_exporters.h"

#include <cmath>
#include <limits>

#include "ingot/nn/gpt.h"
#include "ingot/nn/transformer.h"
#include "onnx_builtin_exporters.h"

namespace ingot::io::onnx::detail {
namespace {

constexpr int64_t kOnnxBool = 9;

// T of x [N, T, ...] as an i64 [1].
std::string seq_len(OnnxGraph& g, const std::string& x, const std::string& p) {
  return g.node("Shape", {x}, {attr("start", int64_t{1}), attr("end", int64_t{2})}, p + "_T");
}

// The first `t` rows of `table` [rows, ...]: Slice along axis 0.
std::string first_rows(OnnxGraph& g, const std::string& table, const std::string& t, const std::string& p) {
  return g.node("Slice", {table, g.constant_i64(p + "_start", {0}), t, g.constant_i64(p + "_axis", {0})}, {}, p);
}

// x [..., D] sliced to [..., begin:end) along its last axis (axis 3 of [N, H, T, D]).
std::string last_dims(OnnxGraph& g, const std::string& x, int64_t begin, int64_t end, const std::string& p) {
  return g.node(
      "Slice",
      {x, g.constant_i64(p + "_start", {begin}), g.constant_i64(p + "_end", {end}), g.constant_i64(p + "_axis", {3})},
      {}, p);
}

// q or k [N, H, T, D] rotated as MultiheadAttention::rotate does: x cos + rotate_half(x) sin, with
// cos / sin of position * base^(-2i / D) tabulated for `rows` positions (f32, as Ingot computes
// them) and sliced to T.
std::string rotate(OnnxGraph& g, const std::string& x, const std::string& t, int64_t rows, int64_t d, double base,
                   const std::string& p) {
  const int64_t half = d / 2;
  const float step = static_cast<float>(-2.0 * std::log(base) / static_cast<double>(d));
  std::vector<float> cos_t(rows * d), sin_t(rows * d);
  for (int64_t pos = 0; pos < rows; ++pos)
    for (int64_t i = 0; i < half; ++i) {
      const float angle = static_cast<float>(pos) * std::exp(static_cast<float>(i) * step);
      for (int64_t j : {i, i + half}) {
        cos_t[pos * d + j] = std::cos(angle);
        sin_t[pos * d + j] = std::sin(angle);
      }
    }
  const std::string c = first_rows(g, g.constant_f32(p + "_cos_table", cos_t, Shape{rows, d}), t, p + "_cos");
  const std::string s = first_rows(g, g.constant_f32(p + "_sin_table", sin_t, Shape{rows, d}), t, p + "_sin");
  const std::string upper = g.node("Neg", {last_dims(g, x, half, d, p + "_upper")}, {}, p + "_neg");
  const std::string rotated =
      g.node("Concat", {upper, last_dims(g, x, 0, half, p + "_lower")}, {attr("axis", int64_t{3})}, p + "_half");
  return g.node("Add", {g.node("Mul", {x, c}, {}, p + "_xcos"), g.node("Mul", {rotated, s}, {}, p + "_rsin")}, {}, p);
}

// scores [N, H, T, T] with -inf where a query would see a later key: Trilu keeps the strict upper
// triangle (k = 1) of a [T, T] matrix of ones, which becomes Where's condition.
std::string causal_mask(OnnxGraph& g, const std::string& scores, const std::string& t, const std::string& p) {
  const std::string tt = g.node("Concat", {t, t}, {attr("axis", int64_t{0})}, p + "_TT");
  const std::string ones = g.node("Expand", {g.constant_f32(p + "_one", {1.0f}, Shape()), tt}, {}, p + "_ones");
  const std::string k = g.constant(p + "_k", Tensor::from_vector(std::vector<int64_t>{1}, Shape()));
  const std::string later = g.node("Trilu", {ones, k}, {attr("upper", int64_t{1})}, p + "_later");
  const std::string cond = g.node("Cast", {later}, {attr("to", kOnnxBool)}, p + "_future");
  const std::string neg_inf = g.constant_f32(p + "_neg_inf", {-std::numeric_limits<float>::infinity()}, Shape());
  return g.node("Where", {cond, neg_inf, scores}, {}, p);
}

// [N, T, C] -> c_attn -> q, k, v [N, H, T, D] -> softmax(q k^T * scale (+ mask)) v -> [N, T, C] -> c_proj.
std::string attention(OnnxGraph& g, const nn::Module& m, const std::string& path, const std::string& x) {
  const nn::AttentionConfig& c = as<nn::MultiheadAttention>(m, path).config();
  const std::string p = where(path);
  const Shape& in = g.shape(x);
  const int64_t h = c.heads, d = c.dim / c.heads;
  const std::string qkv = g.module(*m.get_submodule("c_attn"), child_path(path, "c_attn"), x);
  const std::string split = g.node("Reshape", {qkv, g.constant_i64(p + "_qkv_shape", {0, 0, 3, h, d})}, {}, p + "_qkv");
  const std::string heads =  // [3, N, H, T, D]
      g.node("Transpose", {split}, {attr("perm", std::vector<int64_t>{2, 0, 3, 1, 4})}, p + "_heads");
  const auto part = [&](int64_t i, const char* name) {
    const std::string idx =
        g.constant(p + "_" + name + "_index", Tensor::from_vector(std::vector<int64_t>{i}, Shape()));
    return g.node("Gather", {heads, idx}, {attr("axis", int64_t{0})}, p + "_" + name);
  };
  std::string q = part(0, "q"), k = part(1, "k");
  const std::string v = part(2, "v");
  const std::string t = seq_len(g, x, p);
  if (c.rotary) {
    q = rotate(g, q, t, in[1], d, c.rotary_base, p + "_q_rot");
    k = rotate(g, k, t, in[1], d, c.rotary_base, p + "_k_rot");
  }
  const std::string kt = g.node("Transpose", {k}, {attr("perm", std::vector<int64_t>{0, 1, 3, 2})}, p + "_kT");
  const std::string scale =
      g.constant_f32(p + "_scale", {static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)))}, Shape());
  std::string scores = g.node("Mul", {g.node("MatMul", {q, kt}, {}, p + "_qk"), scale}, {}, p + "_scores");
  if (c.causal) scores = causal_mask(g, scores, t, p + "_masked");
  const std::string probs = g.node("Softmax", {scores}, {attr("axis", int64_t{-1})}, p + "_probs");
  const std::string y = g.node("MatMul", {probs, v}, {}, p + "_y");  // [N, H, T, D]
  const std::string merged_t = g.node("Transpose", {y}, {attr("perm", std::vector<int64_t>{0, 2, 1, 3})}, p + "_y_t");
  const std::string merged =
      g.node("Reshape", {merged_t, g.constant_i64(p + "_merge_shape", {0, 0, c.dim})}, {}, p + "_merged");
  g.set_shape(merged, in);
  return g.module(*m.get_submodule("c_proj"), child_path(path, "c_proj"), merged);
}

// x + weight[:T].
std::string position_embedding(OnnxGraph& g, const nn::Module& m, const std::string& path, const std::string& x) {
  const auto& pe = as<nn::PositionEmbedding>(m, path);
  const std::string p = where(path);
  const std::string w = g.initializer(child_path(path, "weight"), pe.weight());
  return g.node("Add", {x, first_rows(g, w, seq_len(g, x, p), p + "_rows")}, {}, p);
}

// Pre-LayerNorm: h = x + attn(ln_1(x)), h + mlp(ln_2(h)); post-LayerNorm: h = ln_1(x + attn(x)),
// ln_2(h + mlp(h)).
std::string transformer_block(OnnxGraph& g, const nn::Module& m, const std::string& path, const std::string& x) {
  const auto& b = as<nn::TransformerBlock>(m, path);
  const auto part = [&](const char* name, const std::string& in) {
    return g.module(*b.get_submodule(name), child_path(path, name), in);
  };
  const auto residual = [&](const std::string& a, const std::string& r, const char* name) {
    const std::string sum = g.node("Add", {a, r}, {}, child_path(path, name));
    g.set_shape(sum, g.shape(a));
    return sum;
  };
  if (b.config().norm_first) {
    const std::string h = residual(x, part("attn", part("ln_1", x)), "attn_residual");
    return residual(h, part("mlp", part("ln_2", h)), "mlp_residual");
  }
  const std::string h = part("ln_1", residual(x, part("attn", x), "attn_residual"));
  return part("ln_2", residual(h, part("mlp", h), "mlp_residual"));
}

// ids [N, T] -> wte (+ wpe) -> blocks -> ln_f -> MatMul with wte.weight^T (the tied head): logits
// [N, T, vocab] with N and T symbolic.
std::string gpt(OnnxGraph& g, const nn::Module& m, const std::string& path, const std::string& ids) {
  const nn::GptConfig& c = as<nn::Gpt>(m, path).config();
  INGOT_CHECK_AS(g.dtype(ids) == DType::I64 && g.shape(ids).size() == 2, InputError,
                 "ONNX export: layer '{}' (GPT) takes token ids: export it with ExportOptions::input = "
                 "InputKind::TokenIds (input \"input_ids\" int64 [N, T]); the input here is {} {}",
                 where(path), dtype_name(g.dtype(ids)), g.shape(ids).str());
  INGOT_CHECK_SHAPE(g.shape(ids)[1] <= c.block_size,
                    "ONNX export: layer '{}' (GPT) sees at most {} tokens (block_size); the input shape asks for T up "
                    "to {}: export with input_shape [{}]",
                    where(path), c.block_size, g.shape(ids)[1], c.block_size);
  const auto part = [&](const std::string& name, const std::string& in) {
    return g.module(*m.get_submodule(name), child_path(path, name), in);
  };
  std::string x = part("transformer.wte", ids);
  if (!c.rotary) x = part("transformer.wpe", x);
  x = part("transformer.drop", x);
  for (int64_t i = 0; i < c.n_layer; ++i) x = part("transformer.h." + std::to_string(i), x);
  x = part("transformer.ln_f", x);
  // The wte exporter added the weight under its state_dict name; the head reads the same initializer.
  const std::string wte = child_path(child_path(path, "transformer.wte"), "weight");
  const std::string wt = g.node("Transpose", {wte}, {attr("perm", std::vector<int64_t>{1, 0})}, wte + "_t");
  const std::string logits = g.node("MatMul", {x, wt}, {}, child_path(path, "lm_head"));
  g.set_shape(logits, m.output_shape(g.shape(ids)));
  g.set_dim_names(logits, {"N", "T", ""});
  return logits;
}

}  // namespace

void add_transformer_exporters(ExporterRegistry& r) {
  r.add("GPT", gpt);
  r.add("TransformerBlock", transformer_block);
  r.add("MultiheadAttention", attention);
  r.add("PositionEmbedding", position_embedding);
}

}  // namespace ingot::io::onnx::detail
