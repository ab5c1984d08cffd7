// Image test helpers: libpng / libjpeg writers for the decoder tests, stderr capture by dup2.
#include "image_test_util.h"

// clang-format off
#include <cstdio>  // jpeglib.h needs FILE declared first
#include <jpeglib.h>
// clang-format on
#include <png.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cstdlib>

namespace ingot::test {

void write_png(const std::string& path, const PngSpec& s) {
  FILE* f = std::fopen(path.c_str(), "wb");
  REQUIRE(f != nullptr);
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png_create_info_struct(png);
  png_init_io(png, f);
  png_set_IHDR(png, info, static_cast<png_uint_32>(s.width), static_cast<png_uint_32>(s.height), s.bit_depth,
               s.color_type, s.interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  std::vector<png_color> palette;
  for (size_t i = 0; i + 2 < s.palette.size(); i += 3)
    palette.push_back({s.palette[i], s.palette[i + 1], s.palette[i + 2]});
  if (!palette.empty()) png_set_PLTE(png, info, palette.data(), static_cast<int>(palette.size()));
  if (!s.trns.empty()) png_set_tRNS(png, info, s.trns.data(), static_cast<int>(s.trns.size()), nullptr);
  png_write_info(png, info);
  const int channels = s.color_type == PNG_COLOR_TYPE_RGB          ? 3
                       : s.color_type == PNG_COLOR_TYPE_RGBA       ? 4
                       : s.color_type == PNG_COLOR_TYPE_GRAY_ALPHA ? 2
                                                                   : 1;
  const size_t per_row = static_cast<size_t>(s.width * channels);
  // Rows packed by hand: big-endian 16-bit samples, or sub-byte samples filling bytes from the top bit.
  std::vector<std::vector<uint8_t>> rows(static_cast<size_t>(s.height));
  for (int y = 0; y < s.height; ++y) {
    std::vector<uint8_t>& row = rows[static_cast<size_t>(y)];
    row.assign((per_row * static_cast<size_t>(s.bit_depth) + 7) / 8, 0);
    for (size_t i = 0; i < per_row; ++i) {
      const uint16_t v = s.samples[static_cast<size_t>(y) * per_row + i];
      if (s.bit_depth == 16) {
        row[2 * i] = static_cast<uint8_t>(v >> 8);
        row[2 * i + 1] = static_cast<uint8_t>(v);
      } else {
        const size_t bit = i * static_cast<size_t>(s.bit_depth);
        row[bit / 8] |= static_cast<uint8_t>(v << (8 - s.bit_depth - bit % 8));
      }
    }
  }
  std::vector<png_bytep> pointers;
  for (auto& r : rows) pointers.push_back(r.data());
  png_write_image(png, pointers.data());
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  REQUIRE(std::fclose(f) == 0);
}

std::vector<uint8_t> jpeg_bytes(int width, int height, int components, const std::vector<uint8_t>& pixels, int quality,
                                const std::vector<std::vector<uint8_t>>& app1) {
  jpeg_compress_struct cinfo;
  jpeg_error_mgr err;
  cinfo.err = jpeg_std_error(&err);
  jpeg_create_compress(&cinfo);
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&cinfo, &buffer, &size);
  cinfo.image_width = static_cast<JDIMENSION>(width);
  cinfo.image_height = static_cast<JDIMENSION>(height);
  cinfo.input_components = components;
  cinfo.in_color_space = components == 1 ? JCS_GRAYSCALE : components == 3 ? JCS_RGB : JCS_CMYK;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, quality, TRUE);
  jpeg_start_compress(&cinfo, TRUE);
  for (const std::vector<uint8_t>& segment : app1)
    jpeg_write_marker(&cinfo, JPEG_APP0 + 1, segment.data(), static_cast<unsigned>(segment.size()));
  while (cinfo.next_scanline < cinfo.image_height) {
    JSAMPROW row = const_cast<uint8_t*>(pixels.data()) + cinfo.next_scanline * static_cast<size_t>(width * components);
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  std::vector<uint8_t> out(buffer, buffer + size);
  std::free(buffer);
  return out;
}

std::string stderr_of(const std::function<void()>& fn) {
  std::fflush(stderr);
  FILE* capture = std::tmpfile();
  REQUIRE(capture != nullptr);
  const int saved = dup(2);
  dup2(fileno(capture), 2);
  try {
    fn();
  } catch (...) {
    std::fflush(stderr);
    dup2(saved, 2);
    close(saved);
    std::fclose(capture);
    throw;
  }
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  std::rewind(capture);
  std::string text;
  for (int c; (c = std::fgetc(capture)) != EOF;) text += static_cast<char>(c);
  std::fclose(capture);
  return text;
}

}  // namespace ingot::test
