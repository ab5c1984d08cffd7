// gpt2_state_dict: Ingot's names already are GPT-2's; only the Conv1D layers' layout and the
// tied head differ.
#include "ingot/io/hf_gpt2.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "ingot/base/error.h"
#include "ingot/io/hf_folder.h"

namespace ingot::io {

NamedTensors gpt2_state_dict(const nn::Gpt& model) {
  INGOT_CHECK_AS(!model.config().rotary, InputError,
                 "GPT-2 format: this model uses rotary position embeddings, which GPT2LMHeadModel does not have; "
                 "export it to ONNX instead");
  NamedTensors out;
  for (const auto& [name, t] : model.state_dict()) {
    Tensor v = t.detach().to(Device::cpu()).to(DType::F32);
    // c_attn, c_proj (attention and MLP) and c_fc are Conv1D in GPT-2: weight [in, out].
    const bool conv1d = name.ends_with(".weight") && name.find(".h.") != std::string::npos &&
                        (name.find(".c_attn.") != std::string::npos || name.find(".c_proj.") != std::string::npos ||
                         name.find(".c_fc.") != std::string::npos);
    if (conv1d) v = v.transpose(0, 1);
    out.emplace_back(name, v.contiguous());
  }
  out.emplace_back("lm_head.weight", model.token_embedding().detach().to(Device::cpu()).to(DType::F32).contiguous());
  return out;
}

std::string gpt2_config_json(const nn::GptConfig& c) {
  nlohmann::json j;
  j["architectures"] = {"GPT2LMHeadModel"};
  j["model_type"] = "gpt2";
  j["n_layer"] = c.n_layer;
  j["n_head"] = c.n_head;
  j["n_embd"] = c.n_embd;
  j["n_positions"] = c.block_size;
  j["n_ctx"] = c.block_size;
  j["vocab_size"] = c.vocab_size;
  j["activation_function"] = "gelu_new";
  j["layer_norm_epsilon"] = c.eps;
  j["resid_pdrop"] = c.dropout;
  j["embd_pdrop"] = c.dropout;
  j["attn_pdrop"] = c.dropout;
  j["tie_word_embeddings"] = true;
  j["scale_attn_weights"] = true;
  j["bos_token_id"] = nullptr;  // (GPT2Config's default, 50256, names a token of GPT-2's own vocabulary)
  j["eos_token_id"] = nullptr;
  return j.dump(2) + "\n";
}

void save_gpt2(const nn::Gpt& model, const std::filesystem::path& dir) {
  INGOT_CHECK_AS(model.config().bias, InputError,
                 "GPT-2 format: this model has no biases (bias: false), which GPT2LMHeadModel always has; export it "
                 "to ONNX instead");
  save_hf_folder(dir, gpt2_state_dict(model), gpt2_config_json(model.config()));
}

}  // namespace ingot::io
