// save_hf_folder: the folder, then each file written atomically.
#include "ingot/io/hf_folder.h"

#include <fmt/format.h>

#include "ingot/base/error.h"
#include "ingot/io/atomic_write.h"

namespace ingot::io {

void save_hf_folder(const std::filesystem::path& dir, const NamedTensors& tensors, const std::string& config_json) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw InputError(fmt::format("{}: cannot create the folder: {}", dir.string(), ec.message()));
  // (no Ingot checksum in the metadata: transformers reads the file, not Ingot)
  atomic_write(dir / "model.safetensors", safetensors_bytes(tensors, {{"format", "pt"}}));
  atomic_write(dir / "config.json", config_json);
}

}  // namespace ingot::io
