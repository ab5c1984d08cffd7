// Private: PNG and JPEG decoding from memory through libpng and libjpeg, as C-style functions that
// hold no C++ objects, so the libraries' longjmp error handling never crosses a C++ destructor.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ingot::data::codec {

/// A decoded image or the reason it could not be decoded. `pixels` is malloc'ed (free() it),
/// 8-bit, rows of width * channels interleaved samples; channels 1 (grey), 2 (grey, alpha),
/// 3 (RGB) or 4 (RGBA).
struct RawImage {
  int width = 0;
  int height = 0;
  int channels = 0;
  unsigned char* pixels = nullptr;
  char message[256] = {};    ///< the library's reason when decoding failed
  bool unsupported = false;  ///< failed on a valid file of a kind not handled (CMYK)
  /// A JPEG's EXIF orientation (1 to 8) when asked for (`read_orientation`), else 1; the pixels
  /// are as stored either way.
  int orientation = 1;
};

/// Decode a whole PNG file held in `data`. Palette images become RGB (RGBA with a tRNS chunk),
/// grey below 8 bits is expanded, 16-bit samples keep their high byte. Returns false with
/// `out->message` set on any error; libpng warnings are ignored, never printed.
bool decode_png(const unsigned char* data, size_t size, RawImage* out);

/// Decode a whole JPEG file held in `data` to grey (1 channel) or RGB (3). Returns false with
/// `out->message` set on any error, on a libjpeg warning (corrupt or truncated data; stray bytes
/// between segments excepted), and for CMYK / YCCK images; nothing is printed.
/// `divisor` 2, 4 or 8 decodes at that fraction of each side (libjpeg's DCT scaling, sides
/// rounded up): less work when the image is shrunk afterwards anyway. `read_orientation` saves the
/// APP1 segments while the header is read and sets `out->orientation` from the first EXIF one.
bool decode_jpeg(const unsigned char* data, size_t size, RawImage* out, int divisor = 1, bool read_orientation = false);

/// Reads a JPEG's header only: width, height and channels (1 or 3) into `out` (as stored), and
/// its EXIF orientation when `read_orientation`; no pixels. Returns false with `out->message` set
/// when the header is unreadable.
bool probe_jpeg(const unsigned char* data, size_t size, RawImage* out, bool read_orientation = false);

}  // namespace ingot::data::codec
