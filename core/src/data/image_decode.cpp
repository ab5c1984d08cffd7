// Image files: read the bytes, pick the codec by signature, and turn the codec's C result into
// an Image (upright, when EXIF orientation applies) or one InputError line naming the file.
#include "ingot/data/image_decode.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "image_codecs.h"
#include "image_orientation.h"
#include "ingot/base/error.h"
#include "ingot/base/input_file.h"

namespace ingot::data {
namespace {

constexpr unsigned char kPngSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};

[[noreturn]] void fail(const std::string& name, const std::string& what) {
  throw InputError(fmt::format("{}: {}", name, what));
}

}  // namespace

ExifOrientation parse_exif_orientation(const std::string& text, const std::string& where) {
  if (text == "ignore") return ExifOrientation::Ignore;
  if (text == "apply") return ExifOrientation::Apply;
  throw ConfigError(fmt::format(
      "{}: '{}' is not ignore (pixels as stored, torchvision's default) or apply (turned upright by the JPEG's "
      "EXIF orientation, PIL's ImageOps.exif_transpose)",
      where, text));
}

bool is_image_path(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext == ".png" || ext == ".jpg" || ext == ".jpeg";
}

std::vector<uint8_t> read_image_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) fail(path, "no such image file; check the path");
  const InputFile file(path);  // (a FIFO or a device is refused, not read)
  std::vector<uint8_t> bytes(static_cast<size_t>(file.size()));
  file.read_at(bytes.data(), bytes.size(), 0);
  return bytes;
}

Image decode_image(const std::string& path, ExifOrientation exif) {
  return decode_image(read_image_file(path), path, 1, exif);
}

ImageInfo probe_image(std::span<const uint8_t> bytes, const std::string& name, ExifOrientation exif) {
  ImageInfo info;
  if (bytes.size() >= 8 && std::memcmp(bytes.data(), kPngSignature, 8) == 0) {
    // The IHDR chunk comes first: length (4), "IHDR" (4), width and height (4 each, big-endian).
    if (bytes.size() < 24 || std::memcmp(bytes.data() + 12, "IHDR", 4) != 0)
      fail(name, "corrupt or truncated PNG (no IHDR chunk); replace or remove the file");
    const auto be32 = [&](size_t at) {
      return (int64_t{bytes[at]} << 24) | (int64_t{bytes[at + 1]} << 16) | (int64_t{bytes[at + 2]} << 8) |
             int64_t{bytes[at + 3]};
    };
    info.width = be32(16);
    info.height = be32(20);
  } else if (bytes.size() >= 3 && bytes[0] == 0xFF && bytes[1] == 0xD8 && bytes[2] == 0xFF) {
    codec::RawImage raw;
    if (!codec::probe_jpeg(bytes.data(), bytes.size(), &raw, exif == ExifOrientation::Apply))
      fail(name, fmt::format("corrupt or truncated JPEG ({}); replace or remove the file", raw.message));
    const bool swapped = orientation_swaps_sides(raw.orientation);
    info.width = swapped ? raw.height : raw.width;
    info.height = swapped ? raw.width : raw.height;
    info.jpeg = true;
    info.orientation = raw.orientation;
  } else {
    fail(name, bytes.empty() ? "the file is empty; replace or remove it"
                             : "not a PNG or JPEG file (unknown signature); convert it or remove it");
  }
  if (info.width <= 0 || info.height <= 0) fail(name, "the image has no pixels; replace or remove the file");
  return info;
}

Image decode_image(std::span<const uint8_t> bytes, const std::string& name, int64_t divisor, ExifOrientation exif) {
  INGOT_CHECK(divisor == 1 || divisor == 2 || divisor == 4 || divisor == 8,
              "decode_image: divisor {} must be 1, 2, 4 or 8", divisor);
  codec::RawImage raw;
  bool ok = false;
  const char* kind = "";
  if (bytes.size() >= 8 && std::memcmp(bytes.data(), kPngSignature, 8) == 0) {
    kind = "PNG";
    ok = codec::decode_png(bytes.data(), bytes.size(), &raw);
  } else if (bytes.size() >= 3 && bytes[0] == 0xFF && bytes[1] == 0xD8 && bytes[2] == 0xFF) {
    kind = "JPEG";
    ok =
        codec::decode_jpeg(bytes.data(), bytes.size(), &raw, static_cast<int>(divisor), exif == ExifOrientation::Apply);
  } else {
    fail(name, bytes.empty() ? "the file is empty; replace or remove it"
                             : "not a PNG or JPEG file (unknown signature); convert it or remove it");
  }
  if (!ok && raw.unsupported) fail(name, raw.message);
  if (!ok) fail(name, fmt::format("corrupt or truncated {} ({}); replace or remove the file", kind, raw.message));
  Image image;
  const bool swapped = orientation_swaps_sides(raw.orientation);
  image.width = swapped ? raw.height : raw.width;
  image.height = swapped ? raw.width : raw.height;
  image.channels = raw.channels;
  const size_t n = static_cast<size_t>(raw.width) * static_cast<size_t>(raw.height) * static_cast<size_t>(raw.channels);
  if (raw.orientation == 1) {
    image.pixels.assign(raw.pixels, raw.pixels + n);
  } else {
    image.pixels.resize(n);
    orient_pixels(raw.pixels, raw.width, raw.height, raw.channels, raw.orientation, image.pixels.data());
  }
  std::free(raw.pixels);
  if (n == 0) fail(name, "the image has no pixels; replace or remove the file");
  return image;
}

}  // namespace ingot::data
