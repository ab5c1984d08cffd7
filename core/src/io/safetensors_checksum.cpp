// The checksum that save_safetensors records and load_safetensors verifies: CRC-32 over the
// metadata and every tensor's name, dtype, shape and bytes, so no field of the file is outside it.
#include <zlib.h>

#include <algorithm>

#include "ingot/io/safetensors.h"

namespace ingot::io {
namespace {

// zlib's crc32 takes at most a uInt of bytes at a time.
uLong add(uLong crc, const void* data, size_t n) {
  const auto* p = static_cast<const Bytef*>(data);
  while (n > 0) {
    const auto k = static_cast<uInt>(std::min<size_t>(n, size_t{1} << 30));
    crc = crc32(crc, p, k);
    p += k;
    n -= k;
  }
  return crc;
}

// A text field and its terminator: "ab" + "c" and "a" + "bc" give different checksums.
uLong add_field(uLong crc, std::string_view text) {
  crc = add(crc, text.data(), text.size());
  return add(crc, "", 1);
}

}  // namespace

std::string content_checksum(const NamedTensors& tensors, const Metadata& metadata) {
  uLong crc = crc32(0L, Z_NULL, 0);
  for (const auto& [key, value] : metadata) {
    if (key == kChecksumKey) continue;
    crc = add_field(add_field(crc, key), value);
  }
  std::vector<const std::pair<std::string, Tensor>*> order;
  for (const auto& entry : tensors) order.push_back(&entry);
  std::sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->first < b->first; });
  for (const auto* entry : order) {
    const Tensor t = entry->second.strided().to(Device::cpu()).contiguous();
    crc = add_field(add_field(crc, entry->first), safetensors_dtype_name(t.dtype()));
    std::string dims;
    for (const int64_t d : t.shape()) dims += (dims.empty() ? "" : ",") + std::to_string(d);
    crc = add_field(crc, dims);
    const size_t elem = static_cast<size_t>(dtype_size(t.dtype()));
    if (t.numel() > 0)
      crc = add(crc, static_cast<const char*>(t.storage()->data()) + static_cast<size_t>(t.offset()) * elem,
                static_cast<size_t>(t.numel()) * elem);
  }
  return fmt::format("{:08x}", static_cast<uint32_t>(crc));
}

}  // namespace ingot::io
