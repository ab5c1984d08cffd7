// Safetensors writer: the format's dtype names, the JSON header, streaming of tensor bytes.
#include "ingot/io/safetensors.h"

#include <algorithm>
#include <array>
#include <bit>
#include <nlohmann/json.hpp>

#include "ingot/base/grad_mode.h"

namespace ingot::io {
namespace {

static_assert(std::endian::native == std::endian::little, "safetensors stores little-endian bytes");

constexpr std::array<std::pair<DType, std::string_view>, 9> kNames = {{
    {DType::F32, "F32"},
    {DType::F64, "F64"},
    {DType::F16, "F16"},
    {DType::BF16, "BF16"},
    {DType::I64, "I64"},
    {DType::I32, "I32"},
    {DType::I8, "I8"},
    {DType::U8, "U8"},
    {DType::Bool, "BOOL"},
}};

class StringSink final : public ByteSink {
 public:
  void write(const void* data, size_t n) override { bytes.append(static_cast<const char*>(data), n); }
  size_t written() const override { return bytes.size(); }
  std::string bytes;
};

// The tensors in name order, after checking names (the header is a JSON object keyed by them).
std::vector<const std::pair<std::string, Tensor>*> sorted_entries(const NamedTensors& tensors,
                                                                  const std::string& where) {
  std::vector<const std::pair<std::string, Tensor>*> order;
  for (const auto& entry : tensors) {
    INGOT_CHECK(entry.first != "__metadata__", "{}: '__metadata__' is reserved and cannot name a tensor", where);
    INGOT_CHECK(entry.second.defined(), "{}: tensor '{}' is undefined", where, entry.first);
    order.push_back(&entry);
  }
  std::sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->first < b->first; });
  for (size_t i = 1; i < order.size(); ++i) {
    INGOT_CHECK(order[i - 1]->first != order[i]->first, "{}: two tensors are named '{}'", where, order[i]->first);
  }
  return order;
}

std::string header_text(const std::vector<const std::pair<std::string, Tensor>*>& order, const Metadata& metadata,
                        const std::string& where) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const auto* entry : order) {
    const Tensor& t = entry->second;
    const uint64_t nbytes = static_cast<uint64_t>(t.numel()) * static_cast<uint64_t>(dtype_size(t.dtype()));
    header[entry->first] = {{"dtype", safetensors_dtype_name(t.dtype())},
                            {"shape", t.shape().vec()},
                            {"data_offsets", {offset, offset + nbytes}}};
    offset += nbytes;
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("{}: a tensor name or metadata string is not valid UTF-8 ({})", where, e.what()));
  }
  text.append((8 - text.size() % 8) % 8, ' ');  // tensor data starts 8-byte aligned
  return text;
}

void write_entries(ByteSink& sink, const NamedTensors& tensors, const Metadata& metadata, const std::string& where) {
  const auto order = sorted_entries(tensors, where);
  const std::string header = header_text(order, metadata, where);
  const uint64_t length = header.size();
  sink.write(&length, sizeof length);
  sink.write(header);
  // One host copy at a time, so saving never needs a second copy of the whole model.
  NoGradGuard no_grad;
  for (const auto* entry : order) {
    const Tensor t = entry->second.strided().to(Device::cpu()).contiguous();
    if (t.numel() == 0) continue;
    const int64_t elem = dtype_size(t.dtype());
    sink.write(static_cast<const char*>(t.storage()->data()) + t.offset() * elem,
               static_cast<size_t>(t.numel() * elem));
  }
}

}  // namespace

std::string_view safetensors_dtype_name(DType t) {
  for (const auto& [dtype, name] : kNames) {
    if (dtype == t) return name;
  }
  throw DTypeError(fmt::format("safetensors: no format name for dtype {}", dtype_name(t)));
}

std::optional<DType> safetensors_dtype_from_name(std::string_view name) {
  for (const auto& [dtype, n] : kNames) {
    if (n == name) return dtype;
  }
  return std::nullopt;
}

void write_safetensors(ByteSink& sink, const NamedTensors& tensors, const Metadata& metadata) {
  write_entries(sink, tensors, metadata, "safetensors");
}

std::string safetensors_bytes(const NamedTensors& tensors, const Metadata& metadata) {
  StringSink sink;
  write_safetensors(sink, tensors, metadata);
  return std::move(sink.bytes);
}

void save_safetensors(const std::filesystem::path& path, const NamedTensors& tensors, const Metadata& metadata) {
  // Names are checked before the temporary file exists, so a bad call leaves nothing behind.
  const std::string where = path.string();
  sorted_entries(tensors, where);
  Metadata with_checksum = metadata;
  with_checksum[kChecksumKey] = content_checksum(tensors, metadata);
  atomic_write(path, [&](ByteSink& sink) { write_entries(sink, tensors, with_checksum, where); });
}

void save_safetensors(const std::filesystem::path& path, const std::map<std::string, Tensor>& tensors,
                      const Metadata& metadata) {
  save_safetensors(path, NamedTensors(tensors.begin(), tensors.end()), metadata);
}

}  // namespace ingot::io
