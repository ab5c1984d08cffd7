// Image decoding: each PNG colour type and bit depth (written with libpng), interlaced PNGs,
// grey and colour JPEGs (libjpeg), and one InputError line naming the file for each kind of bad
// file, with nothing printed by the libraries.
#include <png.h>

#include <catch2/catch.hpp>

#include <fstream>

#include "data_test_util.h"
#include "image_test_util.h"
#include "ingot/base/error.h"
#include "ingot/data/image_decode.h"

using namespace ingot;
using namespace ingot::data;
using Catch::Matchers::Contains;
using test::PngSpec;
using test::TempDir;

namespace {

/// Samples 0, 1, 2, ... modulo `modulo`, for `n` samples.
std::vector<uint16_t> ramp(size_t n, int modulo, int step = 1) {
  std::vector<uint16_t> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<uint16_t>((i * static_cast<size_t>(step)) % static_cast<size_t>(modulo));
  return v;
}

std::vector<uint8_t> bytes_of(const std::vector<uint16_t>& v) { return std::vector<uint8_t>(v.begin(), v.end()); }

void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

/// The image's pixels are within `tolerance` of `expected` (JPEG is lossy).
void check_close(const Image& image, const std::vector<uint8_t>& expected, int tolerance) {
  REQUIRE(image.pixels.size() == expected.size());
  int worst = 0;
  for (size_t i = 0; i < expected.size(); ++i) worst = std::max(worst, std::abs(image.pixels[i] - expected[i]));
  CHECK(worst <= tolerance);
}

PngSpec spec(int w, int h, int type, int depth, std::vector<uint16_t> samples) {
  PngSpec s;
  s.width = w;
  s.height = h;
  s.color_type = type;
  s.bit_depth = depth;
  s.samples = std::move(samples);
  return s;
}

}  // namespace

TEST_CASE("image decode: 8-bit RGB PNG pixels read back exactly", "[data][image]") {
  TempDir dir;
  const PngSpec s = spec(5, 3, PNG_COLOR_TYPE_RGB, 8, ramp(45, 256, 7));
  test::write_png(dir.file("rgb.png"), s);
  const Image image = decode_image(dir.file("rgb.png"));
  CHECK(image.width == 5);
  CHECK(image.height == 3);
  CHECK(image.channels == 3);
  CHECK(image.pixels == bytes_of(s.samples));
}

TEST_CASE("image decode: 8-bit grey PNG is one channel", "[data][image]") {
  TempDir dir;
  const PngSpec s = spec(4, 4, PNG_COLOR_TYPE_GRAY, 8, ramp(16, 256, 13));
  test::write_png(dir.file("g.png"), s);
  const Image image = decode_image(dir.file("g.png"));
  CHECK(image.channels == 1);
  CHECK(image.pixels == bytes_of(s.samples));
}

TEST_CASE("image decode: 2-bit grey PNG is expanded to 0..255", "[data][image]") {
  TempDir dir;
  test::write_png(dir.file("g2.png"), spec(5, 2, PNG_COLOR_TYPE_GRAY, 2, ramp(10, 4)));
  const Image image = decode_image(dir.file("g2.png"));
  CHECK(image.channels == 1);
  CHECK(image.pixels == std::vector<uint8_t>{0, 85, 170, 255, 0, 85, 170, 255, 0, 85});
}

TEST_CASE("image decode: grey + alpha PNG keeps both channels", "[data][image]") {
  TempDir dir;
  const PngSpec s = spec(3, 2, PNG_COLOR_TYPE_GRAY_ALPHA, 8, ramp(12, 256, 21));
  test::write_png(dir.file("ga.png"), s);
  const Image image = decode_image(dir.file("ga.png"));
  CHECK(image.channels == 2);
  CHECK(image.pixels == bytes_of(s.samples));
}

TEST_CASE("image decode: RGBA PNG keeps four channels", "[data][image]") {
  TempDir dir;
  const PngSpec s = spec(3, 3, PNG_COLOR_TYPE_RGBA, 8, ramp(36, 256, 5));
  test::write_png(dir.file("rgba.png"), s);
  const Image image = decode_image(dir.file("rgba.png"));
  CHECK(image.channels == 4);
  CHECK(image.pixels == bytes_of(s.samples));
}

TEST_CASE("image decode: palette PNG becomes RGB, with transparency RGBA", "[data][image]") {
  TempDir dir;
  PngSpec s = spec(4, 1, PNG_COLOR_TYPE_PALETTE, 4, {2, 0, 1, 2});
  s.palette = {10, 20, 30, 40, 50, 60, 70, 80, 90};
  test::write_png(dir.file("p.png"), s);
  const Image rgb = decode_image(dir.file("p.png"));
  CHECK(rgb.channels == 3);
  CHECK(rgb.pixels == std::vector<uint8_t>{70, 80, 90, 10, 20, 30, 40, 50, 60, 70, 80, 90});
  s.trns = {0, 128};
  test::write_png(dir.file("pt.png"), s);
  const Image rgba = decode_image(dir.file("pt.png"));
  CHECK(rgba.channels == 4);
  CHECK(rgba.pixels == std::vector<uint8_t>{70, 80, 90, 255, 10, 20, 30, 0, 40, 50, 60, 128, 70, 80, 90, 255});
}

TEST_CASE("image decode: 16-bit PNG keeps the high byte", "[data][image]") {
  TempDir dir;
  test::write_png(dir.file("16.png"),
                  spec(2, 1, PNG_COLOR_TYPE_RGB, 16, {0x1234, 0xFFFF, 0x00FF, 0x8000, 0x7FFF, 0x0100}));
  const Image image = decode_image(dir.file("16.png"));
  CHECK(image.channels == 3);
  CHECK(image.pixels == std::vector<uint8_t>{0x12, 0xFF, 0x00, 0x80, 0x7F, 0x01});
}

TEST_CASE("image decode: interlaced PNG gives the same pixels", "[data][image]") {
  TempDir dir;
  PngSpec s = spec(9, 7, PNG_COLOR_TYPE_RGB, 8, ramp(189, 256, 11));
  s.interlaced = true;
  test::write_png(dir.file("i.png"), s);
  CHECK(decode_image(dir.file("i.png")).pixels == bytes_of(s.samples));
}

TEST_CASE("image decode: grey JPEG is one channel close to the original", "[data][image]") {
  TempDir dir;
  std::vector<uint8_t> pixels(16 * 8);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<uint8_t>(40 + (i % 16) * 8);
  write_bytes(dir.file("g.jpg"), test::jpeg_bytes(16, 8, 1, pixels, 100));
  const Image image = decode_image(dir.file("g.jpg"));
  CHECK(image.channels == 1);
  CHECK(image.width == 16);
  check_close(image, pixels, 3);
}

TEST_CASE("image decode: colour JPEG is RGB close to the original, whatever its extension's case", "[data][image]") {
  TempDir dir;
  std::vector<uint8_t> pixels;
  for (int y = 0; y < 16; ++y)
    for (int x = 0; x < 16; ++x) pixels.insert(pixels.end(), {200, 60, 30});  // flat: no subsampling error
  write_bytes(dir.file("c.JPEG"), test::jpeg_bytes(16, 16, 3, pixels, 95));
  CHECK(is_image_path(dir.file("c.JPEG")));
  const Image image = decode_image(dir.file("c.JPEG"));
  CHECK(image.channels == 3);
  check_close(image, pixels, 4);
}

TEST_CASE("image decode: CMYK JPEG is refused with one line saying so", "[data][image]") {
  TempDir dir;
  write_bytes(dir.file("cmyk.jpg"), test::jpeg_bytes(8, 8, 4, std::vector<uint8_t>(256, 100)));
  const std::string msg = test::input_error_of([&] { decode_image(dir.file("cmyk.jpg")); });
  CHECK_THAT(msg, Contains(dir.file("cmyk.jpg")) && Contains("CMYK") && Contains("RGB"));
  CHECK(msg.find('\n') == std::string::npos);
}

TEST_CASE("image decode: truncated PNG is one line naming the file, nothing printed", "[data][image]") {
  TempDir dir;
  test::write_png(dir.file("full.png"), spec(32, 32, PNG_COLOR_TYPE_RGB, 8, ramp(3072, 251, 7)));
  std::vector<uint8_t> bytes = test::read_plain(dir.file("full.png"));
  bytes.resize(bytes.size() / 2);
  write_bytes(dir.file("cut.png"), bytes);
  std::string msg;
  const std::string printed =
      test::stderr_of([&] { msg = test::input_error_of([&] { decode_image(dir.file("cut.png")); }); });
  CHECK_THAT(msg, Contains(dir.file("cut.png") + ": corrupt or truncated PNG") && Contains("truncated"));
  CHECK(msg.find('\n') == std::string::npos);
  CHECK(printed.empty());
}

TEST_CASE("image decode: PNG with a damaged checksum is refused", "[data][image]") {
  TempDir dir;
  test::write_png(dir.file("ok.png"), spec(4, 4, PNG_COLOR_TYPE_GRAY, 8, ramp(16, 256)));
  std::vector<uint8_t> bytes = test::read_plain(dir.file("ok.png"));
  bytes[8 + 8 + 13] ^= 0xFF;  // IHDR's CRC
  write_bytes(dir.file("crc.png"), bytes);
  CHECK_THAT(test::input_error_of([&] { decode_image(dir.file("crc.png")); }),
             Contains(dir.file("crc.png")) && Contains("CRC"));
}

TEST_CASE("image decode: truncated JPEG is one line naming the file, nothing printed", "[data][image]") {
  TempDir dir;
  std::vector<uint8_t> pixels(64 * 64 * 3);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<uint8_t>(i * 37 % 256);
  std::vector<uint8_t> bytes = test::jpeg_bytes(64, 64, 3, pixels);
  bytes.resize(bytes.size() * 2 / 3);
  write_bytes(dir.file("cut.jpg"), bytes);
  std::string msg;
  const std::string printed =
      test::stderr_of([&] { msg = test::input_error_of([&] { decode_image(dir.file("cut.jpg")); }); });
  CHECK_THAT(msg, Contains(dir.file("cut.jpg") + ": corrupt or truncated JPEG"));
  CHECK(msg.find('\n') == std::string::npos);
  CHECK(printed.empty());
}

TEST_CASE("image decode: stray bytes between JPEG segments are tolerated, nothing printed", "[data][image]") {
  TempDir dir;
  const std::vector<uint8_t> pixels(8 * 8, 90);
  std::vector<uint8_t> bytes = test::jpeg_bytes(8, 8, 1, pixels);
  REQUIRE((bytes[2] == 0xFF && bytes[3] == 0xE0));  // SOI, then the JFIF APP0 segment
  const size_t after_app0 = 4 + (size_t{bytes[4]} << 8 | bytes[5]);
  bytes.insert(bytes.begin() + static_cast<std::ptrdiff_t>(after_app0), {0x00, 0x11, 0x22});
  write_bytes(dir.file("stray.jpg"), bytes);
  Image image;
  CHECK(test::stderr_of([&] { image = decode_image(dir.file("stray.jpg")); }).empty());
  check_close(image, pixels, 2);
}

TEST_CASE("image decode: a file that is not an image, an empty one and a missing one are refused", "[data][image]") {
  TempDir dir;
  test::write_plain(dir.file("text.png"), {'h', 'e', 'l', 'l', 'o', '\n', 0, 0, 0});
  CHECK_THAT(test::input_error_of([&] { decode_image(dir.file("text.png")); }),
             Contains(dir.file("text.png") + ": not a PNG or JPEG file"));
  test::write_plain(dir.file("empty.jpg"), {});
  CHECK_THAT(test::input_error_of([&] { decode_image(dir.file("empty.jpg")); }), Contains("the file is empty"));
  CHECK_THAT(test::input_error_of([&] { decode_image(dir.file("none.png")); }),
             Contains(dir.file("none.png") + ": no such image file"));
}

TEST_CASE("image decode: image names are .png, .jpg and .jpeg in any case", "[data][image]") {
  CHECK(is_image_path("a/b.png"));
  CHECK(is_image_path("B.PNG"));
  CHECK(is_image_path("c.Jpg"));
  CHECK(is_image_path("d.jpeg"));
  CHECK_FALSE(is_image_path("e.gif"));
  CHECK_FALSE(is_image_path("png"));
  CHECK_FALSE(is_image_path("f.png.txt"));
}
