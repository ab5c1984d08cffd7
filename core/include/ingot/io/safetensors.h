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

/// The "__metadata__" entry where save_safetensors records content_checksum(): readers that do not
/// know it (torch, the safetensors library) see one more string and read the file as before.
inline constexpr const char* kChecksumKey = "ingot_crc32";

/// Format names of the dtypes ("F32", "BF16", "BOOL", ...).
std::string_view safetensors_dtype_name(DType t);
/// The dtype of a format name; nullopt for names Ingot cannot hold (F8_E4M3, U16, ...).
std::optional<DType> safetensors_dtype_from_name(std::string_view name);

/// CRC-32 (zlib's, 8 hex digits) over every metadata entry but kChecksumKey (key and value, each
/// followed by a NUL byte, in key order), then every tensor in name order: its name, dtype name
/// ("F32") and shape (dims joined by ",") each followed by a NUL byte, then its row-major bytes.
/// Covers every field of a file, not its JSON spelling, so a file re-saved with the same content
/// (by torch, say) keeps its checksum.
std::string content_checksum(const NamedTensors& tensors, const Metadata& metadata);

/// Streams a safetensors file into `sink` one tensor at a time: tensors sorted by name,
/// "__metadata__" first (omitted when empty), header padded with spaces to a multiple of 8.
/// Tensors on another device, in a backend's opaque layout or non-contiguous are copied to
/// contiguous host memory first. Throws ingot::Error on undefined tensors, duplicate or
/// reserved names, names that are not UTF-8.
void write_safetensors(ByteSink& sink, const NamedTensors& tensors, const Metadata& metadata = {});

/// The same, as bytes in memory (small files, tests).
std::string safetensors_bytes(const NamedTensors& tensors, const Metadata& metadata = {});

/// Writes a safetensors file atomically (atomic_write): on any error the old file stays. Records
/// content_checksum() as metadata kChecksumKey (replacing one passed in `metadata`).
void save_safetensors(const std::filesystem::path& path, const NamedTensors& tensors, const Metadata& metadata = {});
void save_safetensors(const std::filesystem::path& path, const std::map<std::string, Tensor>& tensors,
                      const Metadata& metadata = {});

/// The content of a safetensors file.
struct SafetensorsFile {
  std::map<std::string, Tensor> tensors;  ///< contiguous host tensors
  std::vector<std::string> order;         ///< names in file (offset) order
  Metadata metadata;
  bool checksummed = false;  ///< it carried kChecksumKey, and the content matched it
};

/// Reads a safetensors file. The whole header is validated before any tensor memory is
/// allocated: size, header length (<= 100 MB), JSON object, known dtypes, shapes, offsets that
/// tile the data section exactly, no size overflow; then, when the file carries kChecksumKey, its
/// content is checked against it (a file without one, such as torch writes, loads as it is). Only a
/// regular file is opened (a FIFO or a device is refused, not waited on). Any defect throws
/// ingot::InputError with one line "<path>: <what is wrong>".
SafetensorsFile load_safetensors(const std::filesystem::path& path);

}  // namespace ingot::io
