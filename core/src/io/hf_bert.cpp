// save_bert: the state dict in f32 as it is, and a BertConfig of the same shape.
#include "ingot/io/hf_bert.h"

#include <nlohmann/json.hpp>

#include "ingot/io/hf_folder.h"

namespace ingot::io {

std::string bert_config_json(const nn::BertConfig& c, const std::vector<std::string>& class_names) {
  nlohmann::json j;
  const bool classify = c.head == "classify";
  j["architectures"] = {classify ? "BertForSequenceClassification" : "BertForMaskedLM"};
  j["model_type"] = "bert";
  j["vocab_size"] = c.vocab_size;
  j["hidden_size"] = c.n_embd;
  j["num_hidden_layers"] = c.n_layer;
  j["num_attention_heads"] = c.n_head;
  j["intermediate_size"] = c.intermediate;
  j["hidden_act"] = "gelu";
  j["hidden_dropout_prob"] = c.dropout;
  j["attention_probs_dropout_prob"] = c.dropout;
  j["max_position_embeddings"] = c.block_size;
  j["type_vocab_size"] = c.type_vocab_size;
  j["layer_norm_eps"] = c.eps;
  j["pad_token_id"] = c.pad_id >= 0 ? nlohmann::json(c.pad_id) : nlohmann::json(nullptr);
  j["tie_word_embeddings"] = true;
  if (classify) {
    nlohmann::json id2label = nlohmann::json::object(), label2id = nlohmann::json::object();
    for (int64_t i = 0; i < c.classes; ++i) {
      const std::string name =
          i < static_cast<int64_t>(class_names.size()) ? class_names[static_cast<size_t>(i)] : std::to_string(i);
      id2label[std::to_string(i)] = name;
      label2id[name] = i;
    }
    j["num_labels"] = c.classes;
    j["id2label"] = id2label;
    j["label2id"] = label2id;
  }
  return j.dump(2) + "\n";
}

void save_bert(const nn::Bert& model, const std::filesystem::path& dir, const std::vector<std::string>& class_names) {
  NamedTensors tensors;
  for (const auto& [name, t] : model.state_dict())
    tensors.emplace_back(name, t.detach().to(Device::cpu()).to(DType::F32).contiguous());
  save_hf_folder(dir, tensors, bert_config_json(model.config(), class_names));
}

}  // namespace ingot::io
