// EXIF orientation (data.image_folder.exif_orientation): JPEGs carrying each of the 8 tag values in
// a hand-built EXIF segment decode as stored under ignore, and under apply turned upright as
// rotations written here turn them and as PIL's ImageOps.exif_transpose does
// (exif_orientation_check.py); probe reports the upright size, a reduced-scale decode turns the
// same way, a broken tag reads as 1; folders in memory and streamed through transforms; the key.
#include <catch2/catch.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "data_test_util.h"
#include "image_test_util.h"
#include "ingot/base/error.h"
#include "ingot/data/data_config.h"
#include "ingot/data/image_decode.h"
#include "ingot/data/image_folder.h"
#include "ingot/data/image_stream.h"
#include "test_support.h"

using namespace ingot;
using namespace ingot::data;
using Catch::Matchers::Contains;
using test::TempDir;

namespace {

constexpr int kWidth = 13, kHeight = 7;  // not whole blocks of 8, not square

/// An EXIF APP1 segment: "Exif\0\0", a TIFF header (little- or big-endian) and IFD0 holding one
/// entry, tag 0x0112 (Orientation) of `type` (3 SHORT, 4 LONG, 2 ASCII) with `count` values,
/// the first `value`.
std::vector<uint8_t> exif_segment(uint32_t value, bool big_endian = false, uint16_t type = 3, uint32_t count = 1) {
  const uint8_t order = big_endian ? 'M' : 'I';
  std::vector<uint8_t> s = {'E', 'x', 'i', 'f', 0, 0, order, order};
  const auto put = [&](uint32_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) s.push_back(static_cast<uint8_t>(v >> (big_endian ? 8 * (bytes - 1 - i) : 8 * i)));
  };
  put(42, 2);
  put(8, 4);  // IFD0 right after the header
  put(1, 2);  // one entry
  put(0x0112, 2);
  put(type, 2);
  put(count, 4);
  if (type == 4) {
    put(value, 4);
  } else {
    put(value, 2);  // a SHORT sits in the first half of the value field
    put(0, 2);
  }
  put(0, 4);  // no next IFD
  return s;
}

/// A noisy pattern (no two pixels alike in a way a turn could hide).
std::vector<uint8_t> pattern(int width, int height, int channels) {
  std::vector<uint8_t> px(static_cast<size_t>(width * height * channels));
  uint32_t state = 7;
  for (size_t i = 0; i < px.size(); ++i) {
    state = state * 1664525u + 1013904223u;
    const size_t pixel = i / static_cast<size_t>(channels);
    px[i] = static_cast<uint8_t>(20 + (pixel % static_cast<size_t>(width)) * 9 +
                                 (pixel / static_cast<size_t>(width)) * 5 + (state >> 28));
  }
  return px;
}

/// The pattern's JPEG with an EXIF segment of `orientation` (none for 0).
std::vector<uint8_t> oriented_jpeg(int orientation, int width = kWidth, int height = kHeight, int channels = 3,
                                   bool big_endian = false) {
  std::vector<std::vector<uint8_t>> app1;
  if (orientation > 0) app1.push_back(exif_segment(static_cast<uint32_t>(orientation), big_endian));
  return test::jpeg_bytes(width, height, channels, pattern(width, height, channels), 95, app1);
}

Image mirrored(const Image& a) {
  Image r = a;
  const size_t c = static_cast<size_t>(a.channels);
  for (int64_t y = 0; y < a.height; ++y)
    for (int64_t x = 0; x < a.width; ++x)
      std::copy_n(&a.pixels[static_cast<size_t>(y * a.width + a.width - 1 - x) * c], c,
                  &r.pixels[static_cast<size_t>(y * a.width + x) * c]);
  return r;
}

/// Turned a quarter clockwise: the left column becomes the top row.
Image turned_clockwise(const Image& a) {
  Image r = a;
  std::swap(r.width, r.height);
  const size_t c = static_cast<size_t>(a.channels);
  for (int64_t y = 0; y < r.height; ++y)
    for (int64_t x = 0; x < r.width; ++x)
      std::copy_n(&a.pixels[static_cast<size_t>((a.height - 1 - x) * a.width + y) * c], c,
                  &r.pixels[static_cast<size_t>(y * r.width + x) * c]);
  return r;
}

/// What a viewer shows for `stored` tagged `orientation`, built from a mirror and quarter turns.
Image upright(const Image& stored, int orientation) {
  const auto turned = [](Image i, int quarters) {
    for (int q = 0; q < quarters; ++q) i = turned_clockwise(i);
    return i;
  };
  switch (orientation) {
    case 2:
      return mirrored(stored);
    case 3:
      return turned(stored, 2);
    case 4:
      return mirrored(turned(stored, 2));  // flipped top to bottom
    case 5:
      return mirrored(turned(stored, 1));  // transposed
    case 6:
      return turned(stored, 1);
    case 7:
      return mirrored(turned(stored, 3));  // transversed
    case 8:
      return turned(stored, 3);
    default:
      return stored;
  }
}

void check_same(const Image& got, const Image& want) {
  CHECK(got.width == want.width);
  CHECK(got.height == want.height);
  CHECK(got.channels == want.channels);
  CHECK(got.pixels == want.pixels);
}

/// root/<class>/<n>.jpg of `width` x `height`, tagged with the orientations given per class.
std::vector<std::string> tagged_split(const std::filesystem::path& root, int width, int height,
                                      const std::vector<std::pair<std::string, std::vector<int>>>& classes) {
  std::vector<std::string> files;
  for (const auto& [name, orientations] : classes)
    for (size_t i = 0; i < orientations.size(); ++i) {
      const std::filesystem::path path = root / name / (std::to_string(i) + ".jpg");
      std::filesystem::create_directories(path.parent_path());
      test::write_plain(path.string(), oriented_jpeg(orientations[i], width, height));
      files.push_back(path.string());
    }
  return files;
}

std::vector<float> sample_of(const Dataset& d, int64_t i, uint64_t seed = 0, int64_t epoch = 0) {
  std::vector<float> out(static_cast<size_t>(d.sample_numel()));
  d.read_sample(i, seed, epoch, out.data());
  return out;
}

}  // namespace

TEST_CASE("exif orientation: ignore gives the stored pixels for every tag value", "[data][image]") {
  const Image stored = decode_image(oriented_jpeg(0), "plain.jpg");
  REQUIRE(stored.width == kWidth);
  for (int o = 1; o <= 8; ++o) {
    INFO("orientation " << o);
    const std::vector<uint8_t> bytes = oriented_jpeg(o);
    check_same(decode_image(bytes, "o.jpg"), stored);  // the default
    check_same(decode_image(bytes, "o.jpg", 1, ExifOrientation::Ignore), stored);
    const ImageInfo info = probe_image(bytes, "o.jpg");
    CHECK(info.width == kWidth);
    CHECK(info.height == kHeight);
    CHECK(info.orientation == 1);
  }
}

TEST_CASE("exif orientation: apply turns each of the 8 values as exif_transpose does", "[data][image]") {
  TempDir dir;
  for (const int channels : {3, 1})
    for (const bool big_endian : {false, true}) {
      const Image stored = decode_image(oriented_jpeg(0, kWidth, kHeight, channels), "plain.jpg");
      for (int o = 1; o <= 8; ++o) {
        INFO("orientation " << o << ", " << channels << " channels, big-endian " << big_endian);
        const std::vector<uint8_t> bytes = oriented_jpeg(o, kWidth, kHeight, channels, big_endian);
        check_same(decode_image(bytes, "o.jpg", 1, ExifOrientation::Apply), upright(stored, o));
        test::write_plain(dir.file("o.jpg"), bytes);
        check_same(decode_image(dir.file("o.jpg"), ExifOrientation::Apply), upright(stored, o));
      }
    }
  // A LONG holding the value reads as the SHORT the standard asks for.
  const Image stored = decode_image(oriented_jpeg(0), "plain.jpg");
  const std::vector<uint8_t> long_tag =
      test::jpeg_bytes(kWidth, kHeight, 3, pattern(kWidth, kHeight, 3), 95, {exif_segment(6, false, 4)});
  check_same(decode_image(long_tag, "long.jpg", 1, ExifOrientation::Apply), upright(stored, 6));
}

TEST_CASE("exif orientation: probe reports the upright size and the tag under apply", "[data][image]") {
  for (int o = 1; o <= 8; ++o) {
    INFO("orientation " << o);
    const std::vector<uint8_t> bytes = oriented_jpeg(o);
    const ImageInfo info = probe_image(bytes, "o.jpg", ExifOrientation::Apply);
    CHECK(info.width == (o >= 5 ? kHeight : kWidth));
    CHECK(info.height == (o >= 5 ? kWidth : kHeight));
    CHECK(info.orientation == o);
    CHECK(info.jpeg);
    const Image image = decode_image(bytes, "o.jpg", 1, ExifOrientation::Apply);
    CHECK(image.width == info.width);
    CHECK(image.height == info.height);
  }
  TempDir dir;  // a PNG has no orientation read
  test::PngSpec png;
  png.width = 5;
  png.height = 3;
  png.color_type = 0;  // grey
  png.samples.assign(15, 9);
  test::write_png(dir.file("p.png"), png);
  const ImageInfo info = probe_image(test::read_plain(dir.file("p.png")), "p.png", ExifOrientation::Apply);
  CHECK(info.width == 5);
  CHECK(info.height == 3);
  CHECK(info.orientation == 1);
}

TEST_CASE("exif orientation: a reduced-scale decode is turned the same way", "[data][image]") {
  const int w = 45, h = 22;
  for (const int64_t d : {2, 4, 8}) {
    const Image stored = decode_image(oriented_jpeg(0, w, h), "plain.jpg", d);
    REQUIRE(stored.width == (w + d - 1) / d);
    for (int o = 1; o <= 8; ++o) {
      INFO("divisor " << d << ", orientation " << o);
      const std::vector<uint8_t> bytes = oriented_jpeg(o, w, h);
      const Image got = decode_image(bytes, "o.jpg", d, ExifOrientation::Apply);
      check_same(got, upright(stored, o));
      const ImageInfo info = probe_image(bytes, "o.jpg", ExifOrientation::Apply);
      CHECK(got.width == (info.width + d - 1) / d);  // the upright sides, divided and rounded up
      CHECK(got.height == (info.height + d - 1) / d);
    }
  }
}

TEST_CASE("exif orientation: a missing or corrupt EXIF block reads as orientation 1", "[data][image]") {
  const std::vector<uint8_t> pixels = pattern(kWidth, kHeight, 3);
  const Image stored = decode_image(oriented_jpeg(0), "plain.jpg");
  const std::string xmp_text = "http://ns.adobe.com/xap/1.0/";
  std::vector<uint8_t> xmp(xmp_text.begin(), xmp_text.end());
  const std::string xmp_body = "<x:xmpmeta tiff:Orientation=\"6\"/>";
  xmp.push_back(0);
  xmp.insert(xmp.end(), xmp_body.begin(), xmp_body.end());
  std::vector<uint8_t> garbage = {'E', 'x', 'i', 'f', 0, 0};
  for (int i = 0; i < 40; ++i) garbage.push_back(static_cast<uint8_t>(i * 97 + 13));
  std::vector<uint8_t> no_byte_order = exif_segment(6), far_ifd = exif_segment(6), cut = exif_segment(6);
  no_byte_order[6] = no_byte_order[7] = 'X';
  far_ifd[10] = 0xE8;  // IFD0 at 1000, past the end
  far_ifd[11] = 0x03;
  cut.resize(6 + 8 + 2 + 6);  // ends inside the entry
  const std::vector<std::pair<std::string, std::vector<std::vector<uint8_t>>>> cases = {
      {"no APP1 segment", {}},
      {"XMP, not EXIF", {xmp}},
      {"the EXIF header alone", {{'E', 'x', 'i', 'f', 0, 0}}},
      {"garbage after the EXIF header", {garbage}},
      {"no byte order", {no_byte_order}},
      {"IFD0 past the end", {far_ifd}},
      {"cut inside the entry", {cut}},
      {"value 0", {exif_segment(0)}},
      {"value 9", {exif_segment(9)}},
      {"ASCII", {exif_segment(6, false, 2)}},
      {"two values", {exif_segment(6, false, 3, 2)}},
  };
  for (const auto& [what, app1] : cases) {
    INFO(what);
    const std::vector<uint8_t> bytes = test::jpeg_bytes(kWidth, kHeight, 3, pixels, 95, app1);
    Image image;
    ImageInfo info;
    const std::string printed = test::stderr_of([&] {
      image = decode_image(bytes, "bad_exif.jpg", 1, ExifOrientation::Apply);
      info = probe_image(bytes, "bad_exif.jpg", ExifOrientation::Apply);
    });
    check_same(image, stored);
    CHECK(info.orientation == 1);
    CHECK(info.width == kWidth);
    CHECK(printed.empty());
  }
  // Of several segments the first EXIF one counts, as PIL reads it.
  const auto orientation_of = [&](const std::vector<std::vector<uint8_t>>& app1) {
    return probe_image(test::jpeg_bytes(kWidth, kHeight, 3, pixels, 95, app1), "two.jpg", ExifOrientation::Apply)
        .orientation;
  };
  CHECK(orientation_of({exif_segment(3), exif_segment(6)}) == 3);
  CHECK(orientation_of({xmp, exif_segment(6)}) == 6);
}

TEST_CASE("exif orientation: apply gives PIL's exif_transpose pixels exactly", "[data][image]") {
  if (std::system("/usr/bin/python3 -c 'import PIL.ImageOps' > /dev/null 2>&1") != 0) {
    test::skip("Debian's python3-pil is not installed (scripts/test installs it with python3-torchvision)");
    return;
  }
  TempDir dir;
  std::vector<std::string> files;
  for (int o = 0; o <= 8; ++o)
    for (const bool big_endian : {false, true}) {
      if (o == 0 && big_endian) continue;
      files.push_back(dir.file(fmt::format("o{}{}.jpg", o, big_endian ? "_mm" : "")));
      test::write_plain(files.back(), oriented_jpeg(o, 21, 10, 3, big_endian));
    }
  const int rc = std::system(fmt::format("/usr/bin/python3 {} {}", INGOT_EXIF_PY, fmt::join(files, " ")).c_str());
  REQUIRE(rc == 0);
  for (const std::string& f : files) {
    INFO(f);
    std::ifstream in(f + ".pil", std::ios::binary);
    REQUIRE(in);
    Image pil;
    pil.channels = 3;
    in >> pil.width >> pil.height;
    in.get();  // the newline
    pil.pixels.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    check_same(decode_image(f, ExifOrientation::Apply), pil);
  }
}

TEST_CASE("exif orientation: a streamed folder with transforms draws from the upright size", "[data][image]") {
  TempDir dir;
  // 64 x 32 as stored; 32 x 64 upright for 6 and 8.
  const std::vector<std::pair<std::string, std::vector<int>>> classes = {{"a", {6, 1}}, {"b", {8, 3}}};
  const std::vector<std::string> train = tagged_split(dir.path() / "train", 64, 32, classes);
  const std::vector<std::string> test = tagged_split(dir.path() / "test", 64, 32, classes);
  const std::vector<int> tags = {6, 1, 8, 3};
  ImageFolderOptions o;
  o.train = dir.file("train");
  o.test = dir.file("test");
  o.exif_orientation = ExifOrientation::Apply;
  o.train_transforms = TransformPipeline::parse(
      YAML::Load("[{random_resized_crop: {size: [12, 6], scale: [0.5, 1.0]}}, hflip]"), "t.yaml", "t");
  o.test_transforms =
      TransformPipeline::parse(YAML::Load("[{resize: 16}, {center_crop: {size: [12, 6]}}]"), "t.yaml", "t");
  const Shape sample{3, 12, 6};
  const DatasetSplits splits = image_folder_datasets(o, sample, Normalize{});
  REQUIRE(splits.train->streamed());
  CHECK(splits.train->sample_shape() == sample);
  CHECK(splits.test->sample_shape() == sample);
  o.exif_orientation = ExifOrientation::Ignore;
  const DatasetSplits ignored = image_folder_datasets(o, sample, Normalize{});
  int64_t reduced = 0;
  for (const bool is_train : {true, false}) {
    const TransformPipeline& steps = is_train ? o.train_transforms : o.test_transforms;
    const Dataset& d = is_train ? *splits.train : *splits.test;
    for (int64_t i = 0; i < d.size(); ++i) {
      INFO((is_train ? train : test)[static_cast<size_t>(i)]);
      // The expected sample: drawn from the stored size with the sides swapped by hand for 5 to 8.
      const std::vector<uint8_t> bytes = test::read_plain((is_train ? train : test)[static_cast<size_t>(i)]);
      const ImageInfo stored = probe_image(bytes, "f.jpg");
      const bool swapped = tags[static_cast<size_t>(i)] >= 5;
      TransformRng rng(4, 2, i);
      const TransformPlan plan =
          steps.plan(swapped ? stored.width : stored.height, swapped ? stored.height : stored.width, rng);
      const int64_t divisor = plan.max_decode_divisor;
      reduced += divisor > 1;
      std::vector<float> want(static_cast<size_t>(sample.numel()));
      steps.apply(plan, decode_image(bytes, "f.jpg", divisor, ExifOrientation::Apply), divisor, 3, want.data());
      for (float& v : want) v = v / 255.0f;
      const std::vector<float> got = sample_of(d, i, 4, 2);
      CHECK(got == want);
      if (tags[static_cast<size_t>(i)] != 1)
        CHECK(sample_of(is_train ? *ignored.train : *ignored.test, i, 4, 2) != got);
    }
  }
  CHECK(reduced > 0);  // some reads decoded at 1/2 or less, then turned
}

TEST_CASE("exif orientation: folders in memory and streamed without transforms turn images before resizing",
          "[data][image]") {
  TempDir dir;
  const std::vector<std::pair<std::string, std::vector<int>>> classes = {{"a", {5, 2}}, {"b", {7}}};
  const std::vector<std::string> train = tagged_split(dir.path() / "train", 40, 24, classes);
  tagged_split(dir.path() / "test", 40, 24, classes);
  const Shape sample{3, 10, 8};
  ImageFolderOptions o;
  o.train = dir.file("train");
  o.test = dir.file("test");
  o.exif_orientation = ExifOrientation::Apply;
  for (const auto stream : {ImageFolderOptions::Stream::Off, ImageFolderOptions::Stream::On}) {
    o.stream = stream;
    const DatasetSplits splits = image_folder_datasets(o, sample, Normalize{});
    CHECK(splits.train->streamed() == (stream == ImageFolderOptions::Stream::On));
    for (int64_t i = 0; i < splits.train->size(); ++i) {
      const std::vector<uint8_t> px =
          image_sample(decode_image(train[static_cast<size_t>(i)], ExifOrientation::Apply), sample, ResizeMode::Crop);
      std::vector<float> want(px.begin(), px.end());
      for (float& v : want) v = v / 255.0f;
      CHECK(sample_of(*splits.train, i) == want);
    }
  }
}

TEST_CASE("exif orientation: the config key takes ignore or apply and names both otherwise", "[data][image]") {
  TempDir dir;
  tagged_split(dir.path() / "train", 16, 8, {{"a", {6}}, {"b", {1}}});
  tagged_split(dir.path() / "test", 16, 8, {{"a", {6}}, {"b", {1}}});
  const auto node = [&](const std::string& value) {
    return YAML::Load(
        fmt::format("{{dataset: image_folder, workers: 0, batch_size: 1, image_folder: {{train: {}, test: {}, "
                    "exif_orientation: {}}}}}",
                    dir.file("train"), dir.file("test"), value));
  };
  std::string msg;
  try {
    data_schema().validate(node("upright"), "d.yaml", "data");
  } catch (const ConfigError& e) {
    msg = e.what();
  }
  CHECK_THAT(msg, Contains("d.yaml:") && Contains("exif_orientation") && Contains("upright") && Contains("ignore") &&
                      Contains("apply"));
  CHECK(msg.find('\n') == std::string::npos);
  msg.clear();
  try {
    parse_exif_orientation("sideways", "data.image_folder.exif_orientation");
  } catch (const ConfigError& e) {
    msg = e.what();
  }
  CHECK_THAT(msg,
             Contains("data.image_folder.exif_orientation: 'sideways'") && Contains("ignore") && Contains("apply"));
  CHECK(msg.find('\n') == std::string::npos);
  // Through data: apply turns the in-memory test images (16 x 8 tagged 6: 8 x 16 upright).
  for (const char* value : {"ignore", "apply"}) {
    INFO(value);
    data_schema().validate(node(value), "d.yaml", "data");
    DataConfig c = parse_data_config(node(value), "d.yaml");
    c.input_shape = Shape{3, 16, 8};
    const DataLoaders l = make_data_loaders(c, 0);
    const Image image = decode_image(dir.file("test/a/0.jpg"), parse_exif_orientation(value, "v"));
    CHECK(image.height == (std::string(value) == "apply" ? 16 : 8));
    const std::vector<uint8_t> px = image_sample(image, Shape{3, 16, 8}, ResizeMode::Crop);
    std::vector<float> want(px.begin(), px.end());
    for (float& v : want) v = v / 255.0f;
    CHECK(sample_of(l.test->dataset(), 0) == want);
  }
}
