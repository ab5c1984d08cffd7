// Helpers for the image tests: PNG and JPEG files written with libpng and libjpeg (every PNG
// colour type and bit depth, interlaced or not; grey, RGB and CMYK JPEGs, with APP1 segments),
// and stderr capture.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ingot::test {

/// What write_png writes: `samples` holds height rows of width * channels samples of bit_depth
/// bits each (one value per sample, unpacked; 16-bit values up to 65535). color_type is a
/// PNG_COLOR_TYPE_* value; a palette image's samples are indices into `palette` (RGB triples),
/// with `trns` the alpha of its first entries.
struct PngSpec {
  int width = 0, height = 0, color_type = 0, bit_depth = 8;
  std::vector<uint16_t> samples;
  std::vector<uint8_t> palette, trns;
  bool interlaced = false;
};
void write_png(const std::string& path, const PngSpec& spec);

/// A JPEG of `pixels` (rows of width * components bytes; components 1 grey, 3 RGB, 4 CMYK) at
/// `quality`; each of `app1` (an EXIF or XMP segment's bytes) written as an APP1 marker after the
/// JFIF header, in order.
std::vector<uint8_t> jpeg_bytes(int width, int height, int components, const std::vector<uint8_t>& pixels,
                                int quality = 95, const std::vector<std::vector<uint8_t>>& app1 = {});

/// What `fn` writes to the process's stderr (file descriptor 2) while it runs.
std::string stderr_of(const std::function<void()>& fn);

}  // namespace ingot::test
