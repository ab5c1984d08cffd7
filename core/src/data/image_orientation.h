// Private: a JPEG's EXIF orientation (the tag read with libexif from its APP1 segment) and the
// pixels turned upright by it, as PIL's ImageOps.exif_transpose turns them.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ingot::data {

/// The Orientation tag (1 to 8) of IFD0 in an APP1 segment's bytes ("Exif\0\0", then the TIFF
/// block), as PIL's Image.getexif() reads it. 1 (as stored) when the segment is not EXIF, has no
/// such tag, or cannot be read (a corrupt block, a value that is not a number from 1 to 8): a
/// broken tag never makes a good image bad. Calls no libjpeg function, so it may run inside a
/// decoder's setjmp frame.
int exif_orientation(const unsigned char* segment, size_t size);

/// True for orientations 5 to 8, which swap width and height.
inline bool orientation_swaps_sides(int orientation) { return orientation >= 5 && orientation <= 8; }

/// Writes `src` (height rows of width pixels of `channels` samples) turned upright for
/// `orientation` into `dst` (as many samples; width and height swapped for 5 to 8): 2 mirror,
/// 3 rotate 180, 4 flip vertically, 5 transpose, 6 rotate 90 clockwise, 7 transverse, 8 rotate 90
/// counter-clockwise (PIL's FLIP_LEFT_RIGHT, ROTATE_180, FLIP_TOP_BOTTOM, TRANSPOSE, ROTATE_270,
/// TRANSVERSE, ROTATE_90); any other value copies.
void orient_pixels(const uint8_t* src, int64_t width, int64_t height, int64_t channels, int orientation, uint8_t* dst);

}  // namespace ingot::data
