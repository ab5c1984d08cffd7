// NumPy array files: .npy (a header dict, then the raw little-endian data) and .npz (a zip of
// .npy members, stored or deflated), read without numpy. Every header field is checked first.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ingot::data {

/// One array as stored: dtype kind ('f' float, 'i' signed, 'u' unsigned, 'b' bool), item size in
/// bytes, shape and the row-major data in little-endian byte order.
struct NpyArray {
  char kind = 'f';
  int itemsize = 4;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;

  /// The product of `shape` (1 for a scalar).
  int64_t numel() const;
  /// numpy's name of the dtype: "float32", "uint8", "int64", ...
  std::string dtype_name() const;
};

/// Parses the bytes of one .npy file. `source` names it in errors. Throws InputError for a bad
/// magic or header, a big-endian or non-numeric dtype, fortran_order: True, or a data size that
/// does not match the shape (truncated or trailing bytes).
NpyArray parse_npy(const std::vector<uint8_t>& bytes, const std::string& source);

/// The values of a float32, float64 or uint8 array as floats, uint8 scaled by 1/255 (images);
/// InputError naming `source` for another dtype, and naming the sample (the index along the first
/// dim) for a NaN or infinite value.
std::vector<float> npy_to_floats(const NpyArray& array, const std::string& source);

/// Reads a .npy file (InputError naming `path` when it is missing, not a regular file or
/// malformed); only the header is read before its shape is checked against the file's size.
NpyArray read_npy(const std::string& path);

/// Reads member `key` (without ".npy") of a .npz file. Throws InputError naming `path` for a
/// missing file, a damaged zip, a missing member (listing the ones there), an unsupported
/// compression method or a CRC mismatch.
NpyArray read_npz(const std::string& path, const std::string& key);

}  // namespace ingot::data
