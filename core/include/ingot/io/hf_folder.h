// A model folder as Hugging Face's from_pretrained reads it: model.safetensors (plain, with the "pt"
// format tag transformers looks for) and config.json. What the GPT-2 and BERT exports share.
#pragma once

#include <filesystem>
#include <string>

#include "ingot/io/safetensors.h"

namespace ingot::io {

/// Writes DIR/model.safetensors and DIR/config.json (each atomically); the folder is created.
/// InputError naming the folder when it cannot be.
void save_hf_folder(const std::filesystem::path& dir, const NamedTensors& tensors, const std::string& config_json);

}  // namespace ingot::io
