// EXIF orientation: libexif parses the APP1 segment that libjpeg saved (a maintained parser of a
// format with many malformed files in the wild), and the pixels are turned by one walk whose
// start and steps depend on the orientation.
#include "image_orientation.h"

#include <libexif/exif-data.h>
#include <libexif/exif-utils.h>

#include <cstring>

namespace ingot::data {

int exif_orientation(const unsigned char* segment, size_t size) {
  constexpr unsigned char kExifHeader[6] = {'E', 'x', 'i', 'f', 0, 0};
  if (segment == nullptr || size <= sizeof kExifHeader || std::memcmp(segment, kExifHeader, sizeof kExifHeader) != 0)
    return 1;
  ExifData* exif = exif_data_new();
  if (exif == nullptr) return 1;
  // The tag as written: no entries added or "fixed" to the specification's defaults.
  exif_data_unset_option(exif, EXIF_DATA_OPTION_FOLLOW_SPECIFICATION);
  exif_data_load_data(exif, segment, static_cast<unsigned int>(size));
  int orientation = 1;
  // IFD0's tag only, as PIL reads it (IFD1 describes the thumbnail).
  if (const ExifEntry* e = exif_content_get_entry(exif->ifd[EXIF_IFD_0], EXIF_TAG_ORIENTATION);
      e != nullptr && e->data != nullptr && e->components == 1) {
    const ExifByteOrder order = exif_data_get_byte_order(exif);
    long value = 0;
    if (e->format == EXIF_FORMAT_SHORT && e->size >= 2)
      value = exif_get_short(e->data, order);
    else if (e->format == EXIF_FORMAT_LONG && e->size >= 4)
      value = static_cast<long>(exif_get_long(e->data, order));
    if (value >= 1 && value <= 8) orientation = static_cast<int>(value);
  }
  exif_data_unref(exif);
  return orientation;
}

void orient_pixels(const uint8_t* src, int64_t width, int64_t height, int64_t channels, int orientation, uint8_t* dst) {
  // Output pixel (x, y) reads source pixel start + x * step_x + y * step_y (in pixels).
  struct Walk {
    int64_t start, step_x, step_y;
  };
  const int64_t w = width, h = height, last_row = (h - 1) * w, last = last_row + w - 1;
  const Walk walks[] = {
      {0, 1, w},          // 1: as stored
      {w - 1, -1, w},     // 2: mirror
      {last, -1, -w},     // 3: rotate 180
      {last_row, 1, -w},  // 4: flip vertically
      {0, w, 1},          // 5: transpose
      {last_row, -w, 1},  // 6: rotate 90 clockwise
      {last, -w, -1},     // 7: transverse
      {w - 1, w, -1},     // 8: rotate 90 counter-clockwise
  };
  const Walk& walk = walks[orientation >= 1 && orientation <= 8 ? orientation - 1 : 0];
  const int64_t start = walk.start, step_x = walk.step_x, step_y = walk.step_y;
  const bool swapped = orientation_swaps_sides(orientation);
  const int64_t out_w = swapped ? h : w, out_h = swapped ? w : h;
  for (int64_t y = 0; y < out_h; ++y) {
    const uint8_t* from = src + (start + y * step_y) * channels;
    uint8_t* to = dst + y * out_w * channels;
    if (step_x == 1) {
      std::memcpy(to, from, static_cast<size_t>(out_w * channels));
      continue;
    }
    for (int64_t x = 0; x < out_w; ++x, to += channels)
      std::memcpy(to, from + x * step_x * channels, static_cast<size_t>(channels));
  }
}

}  // namespace ingot::data
