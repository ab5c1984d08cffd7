// Fuzz target: bytes -> a file -> load_safetensors (header length, JSON header with its nesting
// and list limits, dtypes, shapes, byte sizes, offsets tiling the data, BOOL bytes, metadata).
// Every refusal must be an InputError; an accepted file must give contiguous host tensors of the
// declared size and survive safetensors_bytes + load_safetensors unchanged.
#include <cstdint>
#include <cstring>
#include <string>

#include "fuzz_util.h"
#include "ingot/base/error.h"
#include "ingot/io/safetensors.h"

namespace {

using ingot::fuzz::require;

size_t byte_size(const ingot::Tensor& t) { return static_cast<size_t>(t.numel() * ingot::dtype_size(t.dtype())); }

bool same(const ingot::Tensor& a, const ingot::Tensor& b) {
  if (a.dtype() != b.dtype() || !(a.shape() == b.shape())) return false;
  const size_t n = byte_size(a);
  return n == 0 || std::memcmp(a.storage()->data(), b.storage()->data(), n) == 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const ingot::fuzz::ScratchFile input("safetensors");
  static const ingot::fuzz::ScratchFile copy("safetensors-copy");
  input.write(data, size);
  try {
    const ingot::io::SafetensorsFile f = ingot::io::load_safetensors(input.path());
    require(f.order.size() == f.tensors.size(), "load_safetensors: one name per tensor in order");
    ingot::io::NamedTensors named;
    for (const std::string& name : f.order) {
      const ingot::Tensor& t = f.tensors.at(name);
      // Tensor::is_contiguous() says false for some empty tensors (a zero dim after the first):
      // their strides come from contiguous_strides, which counts a zero dim as one.
      require(!t.is_opaque() && (t.numel() == 0 || t.is_contiguous()), "load_safetensors: contiguous strided tensors");
      require(byte_size(t) <= size, "load_safetensors: no tensor larger than the file");
      named.emplace_back(name, t);
    }
    const std::string bytes = ingot::io::safetensors_bytes(named, f.metadata);
    copy.write(bytes.data(), bytes.size());
    const ingot::io::SafetensorsFile g = ingot::io::load_safetensors(copy.path());
    require(g.metadata == f.metadata && g.tensors.size() == f.tensors.size(), "round trip: metadata and names");
    for (const auto& [name, t] : f.tensors) {
      const auto it = g.tensors.find(name);
      require(it != g.tensors.end() && same(t, it->second), "round trip: tensors unchanged");
    }
  } catch (const ingot::InputError&) {
    // The documented refusal of a bad safetensors file.
  }
  return 0;
}
