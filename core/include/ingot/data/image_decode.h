// Image files: PNG and JPEG decoded to 8-bit pixels (libpng, libjpeg-turbo), and which file names
// count as images. Conversion to a model's channels and size is image_transform.h.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ingot::data {

/// A decoded image: `height` rows of `width` pixels of `channels` interleaved 8-bit samples;
/// channels 1 (grey), 2 (grey, alpha), 3 (RGB) or 4 (RGBA).
struct Image {
  int64_t width = 0;
  int64_t height = 0;
  int64_t channels = 0;
  std::vector<uint8_t> pixels;
};

/// True for a name ending in .png, .jpg or .jpeg, in any case.
bool is_image_path(const std::string& path);

/// Decodes the PNG or JPEG file at `path` (recognised by its first bytes, not its name). PNG:
/// grey, grey + alpha, RGB, RGBA and palette images of any bit depth (16-bit samples keep their
/// high byte; a palette with transparency gives RGBA); JPEG: grey and colour (CMYK is refused).
/// Throws InputError with one line naming the file for a missing or unreadable file, a file that
/// is neither format, and corrupt or truncated data. Nothing is printed.
Image decode_image(const std::string& path);

/// The same on a file's bytes already in memory (read, or mapped from a pack); `name` is the file
/// named in messages. `divisor` (1, 2, 4, 8) reduces a JPEG while it is decoded (libjpeg's DCT
/// scaling: each side divided, rounded up); a PNG is always decoded whole.
Image decode_image(std::span<const uint8_t> bytes, const std::string& name, int64_t divisor = 1);

/// The bytes of the file at `path`; InputError naming it when it is missing or unreadable.
std::vector<uint8_t> read_image_file(const std::string& path);

/// An image's size from its header, without decoding its pixels.
struct ImageInfo {
  int64_t width = 0;
  int64_t height = 0;
  bool jpeg = false;  ///< a JPEG (whose decoding may be reduced), else a PNG
};
/// Reads `bytes`' header; InputError naming `name` as decode_image's for a file that is neither
/// format or whose header is corrupt.
ImageInfo probe_image(std::span<const uint8_t> bytes, const std::string& name);

}  // namespace ingot::data
