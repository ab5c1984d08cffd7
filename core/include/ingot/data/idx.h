// IDX reader: the MNIST file format (magic 0x00 0x00 dtype ndims, big-endian dims, then data),
// gzip-compressed or plain. Every header field is checked before any large allocation.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ingot::data {

/// IDX data type codes (the third magic byte).
enum IdxType : uint8_t {
  kIdxUbyte = 0x08,
  kIdxByte = 0x09,
  kIdxInt16 = 0x0B,
  kIdxInt32 = 0x0C,
  kIdxFloat32 = 0x0D,
  kIdxFloat64 = 0x0E,
};

/// The contents of an IDX file.
struct IdxArray {
  std::vector<int64_t> dims;  ///< e.g. {60000, 28, 28} for MNIST images
  std::vector<uint8_t> data;  ///< row-major, product(dims) elements of `type`, in host byte order
  uint8_t type = kIdxUbyte;   ///< an IdxType

  int64_t numel() const;
};

/// Reads an IDX file of unsigned bytes, gzip-compressed or plain (zlib reads both).
/// Throws InputError naming `path` for a missing file (with `missing_hint` as the advice, e.g.
/// the Debian package that provides it), a bad magic, an unsupported dtype, dims whose product is
/// over 2^31 elements, a truncated file ("truncated: expected N bytes of data, got M"), trailing
/// bytes after the data, or corrupt gzip data.
IdxArray read_idx(const std::string& path, const std::string& missing_hint = "");

/// Reads an IDX file of any data type (unsigned or signed bytes, int16, int32, float32,
/// float64), converting multi-byte elements to host byte order; otherwise as read_idx.
IdxArray read_idx_any(const std::string& path, const std::string& missing_hint = "");

/// The elements as floats (values as stored, bytes not scaled).
std::vector<float> idx_floats(const IdxArray& array);
/// The elements as sample values, as the idx dataset and `ingot predict` read images: unsigned
/// bytes scaled to [0, 1], other types as stored.
std::vector<float> idx_sample_values(const IdxArray& array);

/// The elements as integers; InputError naming `path` for a float type.
std::vector<int64_t> idx_integers(const IdxArray& array, const std::string& path);

/// "unsigned byte", "int32", "float32", ... for messages.
const char* idx_type_name(uint8_t type);

/// Writes `array` as an IDX file of its type (big-endian on disk), gzip-compressed when `gzip`
/// (tests, tools).
void write_idx(const std::string& path, const IdxArray& array, bool gzip = true);

}  // namespace ingot::data
