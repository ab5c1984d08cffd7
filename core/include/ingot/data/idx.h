// IDX reader: the MNIST file format (magic 0x00 0x00 dtype ndims, big-endian dims, then data),
// gzip-compressed or plain. Every header field is checked before any large allocation.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ingot::data {

/// The contents of an IDX file of unsigned bytes (dtype 0x08).
struct IdxArray {
  std::vector<int64_t> dims;  ///< e.g. {60000, 28, 28} for MNIST images
  std::vector<uint8_t> data;  ///< row-major, product(dims) bytes
};

/// Reads an IDX file of unsigned bytes, gzip-compressed or plain (zlib reads both).
/// Throws InputError naming `path` for a missing file (with `missing_hint` as the advice, e.g.
/// the Debian package that provides it), a bad magic, an unsupported dtype, dims whose product is
/// over 2^31 elements, a truncated file ("truncated: expected N bytes of data, got M"), trailing
/// bytes after the data, or corrupt gzip data.
IdxArray read_idx(const std::string& path, const std::string& missing_hint = "");

/// Writes `array` as an IDX file of unsigned bytes, gzip-compressed when `gzip` (tests, tools).
void write_idx(const std::string& path, const IdxArray& array, bool gzip = true);

}  // namespace ingot::data
