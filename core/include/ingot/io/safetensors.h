// Safetensors files (Hugging Face's format, also what torch users exchange weights in):
// an 8-byte little-endian header length, a JSON header, then the raw tensor bytes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ingot/io/atomic_write.h"
#include "ingot/tensor/tensor.h"

namespace ingot::io {

/// Named tensors in the order given; names must be unique and not "__metadata__".
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;
/// The string-to-string "__metadata__" block of a file.
using Metadata = std::map<std::string, std::string>;

/// Largest header accepted by the reader (the Python library's limit).
inline constexpr uint64_t kSafetensorsMaxHeader = 100ull * 1000 * 1000;

/// Format names of the dtypes ("F32", "BF16", "BOOL", ...).
std::string_view safetensors_dtype_name(DType t);
/// The dtype of a format name; nullopt for names Ingot cannot hold (F8_E4M3, U16, ...).
std::optional<DType> safetensors_dtype_from_name(std::string_view name);

/// Streams a safetensors file into `sink` one tensor at a time: tensors sorted by name,
/// "__metadata__" first (omitted when empty), header padded with spaces to a multiple of 8.
/// Tensors on another device, in a backend's opaque layout or non-contiguous are copied to
/// contiguous host memory first. Throws ingot::Error on undefined tensors, duplicate or
/// reserved names, names that are not UTF-8.
void write_safetensors(ByteSink& sink, const NamedTensors& tensors, const Metadata& metadata = {});

/// The same, as bytes in memory (small files, tests).
std::string safetensors_bytes(const NamedTensors& tensors, const Metadata& metadata = {});

/// Writes a safetensors file atomically (atomic_write): on any error the old file stays.
void save_safetensors(const std::filesystem::path& path, const NamedTensors& tensors, const Metadata& metadata = {});
void save_safetensors(const std::filesystem::path& path, const std::map<std::string, Tensor>& tensors,
                      const Metadata& metadata = {});

/// The content of a safetensors file.
struct SafetensorsFile {
  std::map<std::string, Tensor> tensors;  ///< contiguous host tensors
  std::vector<std::string> order;         ///< names in file (offset) order
  Metadata metadata;
};

/// Reads a safetensors file. The whole header is validated before any tensor memory is
/// allocated: size, header length (<= 100 MB), JSON object, known dtypes, shapes, offsets that
/// tile the data section exactly, no size overflow. Any defect throws ingot::InputError with one
/// line "<path>: <what is wrong>".
SafetensorsFile load_safetensors(const std::filesystem::path& path);

}  // namespace ingot::io
