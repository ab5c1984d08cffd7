// A GPT as Hugging Face's GPT2LMHeadModel stores it: the same tensor names, the Linear weights of
// the blocks transposed (GPT-2's Conv1D keeps [in, out]), lm_head.weight written out (the tied
// token embedding), and the config.json that builds the same model — so that
// GPT2LMHeadModel.from_pretrained(DIR) loads the weights strictly, no hub download.
#pragma once

#include <filesystem>
#include <string>

#include "ingot/io/safetensors.h"
#include "ingot/nn/gpt.h"

namespace ingot::io {

/// The model's tensors under GPT2LMHeadModel's state_dict names and layouts (contiguous f32).
/// InputError for what GPT-2 has no form for (rotary embeddings).
NamedTensors gpt2_state_dict(const nn::Gpt& model);

/// GPT2Config's JSON for the model: n_layer, n_head, n_embd, n_positions, vocab_size, the tanh
/// GELU ("gelu_new"), LayerNorm eps, dropout.
std::string gpt2_config_json(const nn::GptConfig& config);

/// Writes DIR/model.safetensors and DIR/config.json (each atomically); the folder is created.
void save_gpt2(const nn::Gpt& model, const std::filesystem::path& dir);

}  // namespace ingot::io
