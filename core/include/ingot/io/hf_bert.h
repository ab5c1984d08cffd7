// A BERT as Hugging Face's BertForSequenceClassification / BertForMaskedLM stores it: Ingot's
// names and [out, in] Linear weights already are theirs, so the state dict goes out as it is, with
// the config.json that builds the same model — so that from_pretrained(DIR) loads it, no hub
// download (the masked LM's decoder is tied to the word embeddings, as transformers ties it).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "ingot/nn/bert.h"

namespace ingot::io {

/// BertConfig's JSON for the model: sizes, the erf GELU ("gelu"), dropout, LayerNorm eps,
/// pad_token_id, and for a classifier num_labels with id2label / label2id from `class_names`
/// (class numbers when empty).
std::string bert_config_json(const nn::BertConfig& config, const std::vector<std::string>& class_names = {});

/// Writes DIR/model.safetensors and DIR/config.json (each atomically); the folder is created.
void save_bert(const nn::Bert& model, const std::filesystem::path& dir,
               const std::vector<std::string>& class_names = {});

}  // namespace ingot::io
