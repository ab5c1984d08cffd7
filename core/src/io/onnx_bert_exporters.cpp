// ONNX nodes for the BERT preset, N and T dynamic: the padding mask comes from the ids at run time
// (Equal to pad_id, Not, Unsqueeze to [N, 1, 1, T]) and hides keys through Where before Softmax;
// attention is decomposed for opset 17 as for the GPT (MatMul, scale, Softmax, MatMul).
#include "onnx_bert_exporters.h"

#include <cmath>
#include <limits>

#include "ingot/nn/bert.h"
#include "onnx_builtin_exporters.h"

namespace ingot::io::onnx::detail {
namespace {

// bool [N, 1, 1, T]: true where ids is not pad_id (a key the queries may see).
std::string keep_mask(OnnxGraph& g, const std::string& ids, int64_t pad, const std::string& p) {
  const std::string pad_id = g.constant(p + "_pad_id", Tensor::from_vector(std::vector<int64_t>{pad}, Shape()));
  const std::string is_pad = g.node("Equal", {ids, pad_id}, {}, p + "_is_pad");
  const std::string keep = g.node("Not", {is_pad}, {}, p + "_keep");
  return g.node("Unsqueeze", {keep, g.constant_i64(p + "_axes", {1, 2})}, {}, p);
}

// One BertLayer: softmax(q k^T * scale, hidden keys -inf) v, dense, residual, LayerNorm; the
// feed-forward block and its residual and LayerNorm.
std::string bert_layer(OnnxGraph& g, const nn::Module& m, const std::string& path, const std::string& x,
                       const std::string& mask) {
  const nn::BertLayerConfig& c = as<nn::BertLayer>(m, path).config();
  const std::string p = where(path);
  const Shape in = g.shape(x);
  const int64_t h = c.heads, d = c.dim / c.heads;
  const auto part = [&](const std::string& name, const std::string& input) {
    return g.module(*m.get_submodule(name), child_path(path, name), input);
  };
  const auto heads = [&](const char* name, const std::vector<int64_t>& perm) {  // [N, T, C] -> per head
    const std::string y = part(std::string("attention.self.") + name, x);
    const std::string split =
        g.node("Reshape", {y, g.constant_i64(p + "_" + name + "_shape", {0, 0, h, d})}, {}, p + "_" + name + "_split");
    return g.node("Transpose", {split}, {attr("perm", perm)}, p + "_" + name + "_heads");
  };
  const std::string q = heads("query", {0, 2, 1, 3});  // [N, H, T, D]
  const std::string kt = heads("key", {0, 2, 3, 1});   // [N, H, D, T]
  const std::string v = heads("value", {0, 2, 1, 3});
  const std::string scale =
      g.constant_f32(p + "_scale", {static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)))}, Shape());
  std::string scores = g.node("Mul", {g.node("MatMul", {q, kt}, {}, p + "_qk"), scale}, {}, p + "_scores");
  if (!mask.empty()) {
    const std::string neg_inf = g.constant_f32(p + "_neg_inf", {-std::numeric_limits<float>::infinity()}, Shape());
    scores = g.node("Where", {mask, scores, neg_inf}, {}, p + "_masked");
  }
  const std::string probs = g.node("Softmax", {scores}, {attr("axis", int64_t{-1})}, p + "_probs");
  const std::string y = g.node("MatMul", {probs, v}, {}, p + "_y");
  const std::string merged_t = g.node("Transpose", {y}, {attr("perm", std::vector<int64_t>{0, 2, 1, 3})}, p + "_y_t");
  const std::string merged =
      g.node("Reshape", {merged_t, g.constant_i64(p + "_merge_shape", {0, 0, c.dim})}, {}, p + "_merged");
  g.set_shape(merged, in);
  const auto residual = [&](const std::string& a, const std::string& r, const char* name) {
    const std::string sum = g.node("Add", {a, r}, {}, child_path(path, name));
    g.set_shape(sum, in);
    return sum;
  };
  const std::string a =
      part("attention.output.LayerNorm", residual(part("attention.output.dense", merged), x, "attention_residual"));
  const std::string i = part("intermediate.intermediate_act_fn", part("intermediate.dense", a));
  return part("output.LayerNorm", residual(part("output.dense", i), a, "output_residual"));
}

// ids [N, T] -> embeddings (word, position, segment 0), LayerNorm -> layers -> the head: logits
// [N, classes] from the pooled [CLS] state, or [N, T, vocab] through the tied decoder.
std::string bert(OnnxGraph& g, const nn::Module& m, const std::string& path, const std::string& ids) {
  const nn::BertConfig& c = as<nn::Bert>(m, path).config();
  INGOT_CHECK_AS(g.dtype(ids) == DType::I64 && g.shape(ids).size() == 2, InputError,
                 "ONNX export: layer '{}' (BERT) takes token ids: export it with ExportOptions::input = "
                 "InputKind::TokenIds (input \"input_ids\" int64 [N, T]); the input here is {} {}",
                 where(path), dtype_name(g.dtype(ids)), g.shape(ids).str());
  INGOT_CHECK_SHAPE(g.shape(ids)[1] <= c.block_size,
                    "ONNX export: layer '{}' (BERT) sees at most {} tokens (block_size); the input shape asks for {}",
                    where(path), c.block_size, g.shape(ids)[1]);
  const std::string p = where(path);
  const auto part = [&](const std::string& name, const std::string& in) {
    return g.module(*m.get_submodule(name), child_path(path, name), in);
  };
  std::string x = part("bert.embeddings.position_embeddings", part("bert.embeddings.word_embeddings", ids));
  const Shape hidden = g.shape(x);
  const auto& types = as<nn::Embedding>(*m.get_submodule("bert.embeddings.token_type_embeddings"),
                                        child_path(path, "bert.embeddings.token_type_embeddings"));
  const std::string segment0 =
      g.node("Gather",
             {g.initializer(child_path(path, "bert.embeddings.token_type_embeddings.weight"), types.weight()),
              g.constant(p + "_segment", Tensor::from_vector(std::vector<int64_t>{0}, Shape()))},
             {attr("axis", int64_t{0})}, p + "_segment0");
  x = g.node("Add", {x, segment0}, {}, p + "_embeddings");
  g.set_shape(x, hidden);
  x = part("bert.embeddings.dropout", part("bert.embeddings.LayerNorm", x));
  const std::string mask = c.pad_id >= 0 ? keep_mask(g, ids, c.pad_id, p + "_keep") : std::string();
  for (int64_t i = 0; i < c.n_layer; ++i) {
    const std::string name = "bert.encoder.layer." + std::to_string(i);
    x = bert_layer(g, *m.get_submodule(name), child_path(path, name), x, mask);
  }
  std::string logits;
  if (c.head == "classify") {
    const std::string cls =
        g.node("Gather", {x, g.constant(p + "_cls", Tensor::from_vector(std::vector<int64_t>{0}, Shape()))},
               {attr("axis", int64_t{1})}, p + "_cls_state");
    g.set_shape(cls, Shape{hidden[0], c.n_embd});
    const std::string dense = part("bert.pooler.dense", cls);
    const std::string pooled = g.node("Tanh", {dense}, {}, p + "_pooled");
    g.set_shape(pooled, g.shape(dense));
    logits = part("classifier", part("dropout", pooled));
    g.set_dim_names(logits, {"N", ""});
  } else {
    const std::string t = part("cls.predictions.transform.LayerNorm", part("cls.predictions.transform.transform_act_fn",
                                                                           part("cls.predictions.transform.dense", x)));
    // the word embeddings' exporter added their weight under its state_dict name: the tied decoder reads it
    const std::string w = child_path(path, "bert.embeddings.word_embeddings.weight");
    const std::string wt = g.node("Transpose", {w}, {attr("perm", std::vector<int64_t>{1, 0})}, w + "_t");
    const std::string bias = g.initializer(child_path(path, "cls.predictions.bias"), as<nn::Bert>(m, path).mlm_bias());
    logits = g.node("Add", {g.node("MatMul", {t, wt}, {}, p + "_decoder"), bias}, {}, child_path(path, "cls_logits"));
    g.set_dim_names(logits, {"N", "T", ""});
  }
  g.set_shape(logits, m.output_shape(g.shape(ids)));
  return logits;
}

}  // namespace

void add_bert_exporters(ExporterRegistry& r) { r.add("Bert", bert); }

}  // namespace ingot::io::onnx::detail
