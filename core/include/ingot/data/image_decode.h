// Image files: PNG and JPEG decoded to 8-bit pixels (libpng, libjpeg-turbo), turned upright by a
// JPEG's EXIF orientation when asked, and which file names count as images. Conversion to a
// model's channels and size is image_transform.h.
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

/// What decoding does with a JPEG's EXIF orientation tag (data.image_folder.exif_orientation).
enum class ExifOrientation {
  Ignore,  ///< the pixels as stored, as torchvision's default loader (PIL's Image.open) gives them
  /// Turned upright as PIL's ImageOps.exif_transpose turns them (orientations 5 to 8 swap width
  /// and height). The tag is IFD0's in the first EXIF APP1 segment; a missing, corrupt or out of
  /// range tag reads as 1 (as stored). A PNG's eXIf chunk is not read.
  Apply,
};

/// "ignore" or "apply"; ConfigError naming `where` and both choices otherwise.
ExifOrientation parse_exif_orientation(const std::string& text, const std::string& where);

/// True for a name ending in .png, .jpg or .jpeg, in any case.
bool is_image_path(const std::string& path);

/// Decodes the PNG or JPEG file at `path` (recognised by its first bytes, not its name). PNG:
/// grey, grey + alpha, RGB, RGBA and palette images of any bit depth (16-bit samples keep their
/// high byte; a palette with transparency gives RGBA); JPEG: grey and colour (CMYK is refused).
/// Throws InputError with one line naming the file for a missing or unreadable file, a file that
/// is neither format, and corrupt or truncated data. Nothing is printed. `exif`: see
/// ExifOrientation.
Image decode_image(const std::string& path, ExifOrientation exif = ExifOrientation::Ignore);

/// The same on a file's bytes already in memory (read, or mapped from a pack); `name` is the file
/// named in messages. `divisor` (1, 2, 4, 8) reduces a JPEG while it is decoded (libjpeg's DCT
/// scaling: each side divided, rounded up; turned afterwards, so the oriented sides are too); a
/// PNG is always decoded whole.
Image decode_image(std::span<const uint8_t> bytes, const std::string& name, int64_t divisor = 1,
                   ExifOrientation exif = ExifOrientation::Ignore);

/// The bytes of the file at `path`; InputError naming it when it is missing or unreadable.
std::vector<uint8_t> read_image_file(const std::string& path);

/// An image's size from its header, without decoding its pixels: the size decode_image gives
/// with the same `exif` (so transforms draw from the upright size).
struct ImageInfo {
  int64_t width = 0;
  int64_t height = 0;
  bool jpeg = false;    ///< a JPEG (whose decoding may be reduced), else a PNG
  int orientation = 1;  ///< the EXIF orientation applied (1 to 8); 1 when `exif` is Ignore
};
/// Reads `bytes`' header; InputError naming `name` as decode_image's for a file that is neither
/// format or whose header is corrupt.
ImageInfo probe_image(std::span<const uint8_t> bytes, const std::string& name,
                      ExifOrientation exif = ExifOrientation::Ignore);

}  // namespace ingot::data
