// From image to sample: bilinear resizing, plain and antialiased, against torch's interpolate (fixtures from
// tests/golden/make_image_resize.py), torchvision's Resize + CenterCrop geometry, PIL's
// luminance, grey replicated to RGB, alpha dropped, and the channel counts refused.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>

#include "ingot/base/error.h"
#include "ingot/data/image_transform.h"
#include "ingot/io/safetensors.h"

using namespace ingot;
using namespace ingot::data;
using Catch::Matchers::Contains;

namespace {

const io::SafetensorsFile& fixture() {
  static const io::SafetensorsFile f =
      io::load_safetensors(std::filesystem::path(INGOT_GOLDEN_DIR) / "image_resize.safetensors");
  return f;
}

const Tensor& golden(const std::string& name) {
  const auto it = fixture().tensors.find(name);
  REQUIRE(it != fixture().tensors.end());
  return it->second;
}

/// A fixture's planar input as an interleaved Image (grey or RGB).
Image image_of(const Tensor& x) {
  const std::vector<float> v = x.to_vector<float>();
  Image image;
  image.channels = x.size(0);
  image.height = x.size(1);
  image.width = x.size(2);
  const int64_t plane = image.height * image.width;
  image.pixels.resize(v.size());
  for (int64_t c = 0; c < image.channels; ++c)
    for (int64_t p = 0; p < plane; ++p)
      image.pixels[static_cast<size_t>(p * image.channels + c)] =
          static_cast<uint8_t>(v[static_cast<size_t>(c * plane + p)]);
  return image;
}

Image rgb(std::vector<uint8_t> pixels, int64_t width, int64_t channels = 3) {
  Image image;
  image.channels = channels;
  image.width = width;
  image.height = static_cast<int64_t>(pixels.size()) / (width * channels);
  image.pixels = std::move(pixels);
  return image;
}

}  // namespace

TEST_CASE("image transform: bilinear stretch matches torch interpolate (align_corners=False)", "[data][image]") {
  for (const char* name : {"up", "down", "mixed", "shrink_many"}) {
    INFO(name);
    const Tensor& x = golden(std::string(name) + ".x");
    const Tensor& y = golden(std::string(name) + ".y");
    const std::vector<float> out =
        resize_bilinear(x.to_vector<float>(), x.size(0), x.size(1), x.size(2), y.size(1), y.size(2));
    const std::vector<float> want = y.to_vector<float>();
    REQUIRE(out.size() == want.size());
    float worst = 0.0f;
    for (size_t i = 0; i < out.size(); ++i) worst = std::max(worst, std::abs(out[i] - want[i]));
    CHECK(worst <= 1e-3f);
  }
}

TEST_CASE("image transform: antialiased bilinear matches torch interpolate(antialias=True)", "[data][image]") {
  for (const char* name : {"aa_down", "aa_odd", "aa_up"}) {
    INFO(name);
    const Tensor& x = golden(std::string(name) + ".x");
    const Tensor& y = golden(std::string(name) + ".y");
    const std::vector<float> out = resize_bilinear(x.to_vector<float>(), x.size(0), x.size(1), x.size(2), y.size(1),
                                                   y.size(2), /*antialias=*/true);
    const std::vector<float> want = y.to_vector<float>();
    REQUIRE(out.size() == want.size());
    float worst = 0.0f;
    for (size_t i = 0; i < out.size(); ++i) worst = std::max(worst, std::abs(out[i] - want[i]));
    CHECK(worst <= 1e-3f);
    // The plain filter is another result when shrinking: the comparison can tell them apart.
    if (std::string(name) != "aa_up") {
      const std::vector<float> plain =
          resize_bilinear(x.to_vector<float>(), x.size(0), x.size(1), x.size(2), y.size(1), y.size(2));
      float diff = 0.0f;
      for (size_t i = 0; i < out.size(); ++i) diff = std::max(diff, std::abs(plain[i] - want[i]));
      CHECK(diff > 1.0f);
    }
  }
}

TEST_CASE("image transform: an antialiased crop sample matches torch to the nearest byte", "[data][image]") {
  const Tensor& x = golden("aa_crop.x");
  const Tensor& y = golden("aa_crop.y");
  const CropBox b = crop_box(x.size(1), x.size(2), y.size(1), y.size(2));
  CHECK(std::vector<int64_t>{b.resized_height, b.resized_width, b.top, b.left} == golden("aa_crop.box").to_vector<int64_t>());
  const std::vector<uint8_t> out = image_sample(image_of(x), Shape{x.size(0), y.size(1), y.size(2)}, ResizeMode::Crop);
  const std::vector<float> want = y.to_vector<float>();
  float worst = 0.0f;
  for (size_t i = 0; i < out.size(); ++i) worst = std::max(worst, std::abs(static_cast<float>(out[i]) - want[i]));
  CHECK(worst <= 0.501f);
}

TEST_CASE("image transform: crop geometry is torchvision's Resize(shorter side) + CenterCrop", "[data][image]") {
  for (const char* name : {"crop_wide", "crop_tall", "crop_third", "crop_tie", "crop_up"}) {
    INFO(name);
    const Tensor& x = golden(std::string(name) + ".x");
    const Tensor& y = golden(std::string(name) + ".y");
    const CropBox b = crop_box(x.size(1), x.size(2), y.size(1), y.size(2));
    CHECK(std::vector<int64_t>{b.resized_height, b.resized_width, b.top, b.left} ==
          golden(std::string(name) + ".box").to_vector<int64_t>());
  }
}

TEST_CASE("image transform: crop samples without antialiasing match torch to the nearest byte", "[data][image]") {
  for (const char* name : {"crop_wide", "crop_tall", "crop_third", "crop_tie", "crop_up"}) {
    INFO(name);
    const Tensor& x = golden(std::string(name) + ".x");
    const Tensor& y = golden(std::string(name) + ".y");
    const std::vector<uint8_t> out =
        image_sample(image_of(x), Shape{x.size(0), y.size(1), y.size(2)}, ResizeMode::Crop, /*antialias=*/false);
    const std::vector<float> want = y.to_vector<float>();
    REQUIRE(out.size() == want.size());
    float worst = 0.0f;
    for (size_t i = 0; i < out.size(); ++i) worst = std::max(worst, std::abs(static_cast<float>(out[i]) - want[i]));
    CHECK(worst <= 0.501f);
  }
}

TEST_CASE("image transform: stretch samples are the whole image resized, rounded to bytes", "[data][image]") {
  const Tensor& x = golden("down.x");  // 2 channels: take the first as a grey image
  const Tensor grey = x.slice(0, 0, 1).contiguous();
  const std::vector<uint8_t> out = image_sample(image_of(grey), Shape{1, 5, 9}, ResizeMode::Stretch);
  const std::vector<float> want = resize_bilinear(grey.to_vector<float>(), 1, x.size(1), x.size(2), 5, 9, true);
  for (size_t i = 0; i < out.size(); ++i) CHECK(out[i] == static_cast<uint8_t>(std::nearbyint(want[i])));
  const std::vector<uint8_t> cropped = image_sample(image_of(grey), Shape{1, 5, 9}, ResizeMode::Crop);
  CHECK(cropped != out);  // 17x23 to 5x9: resized to 6x9 first, then cropped
}

TEST_CASE("image transform: one channel is PIL's luminance, alpha dropped", "[data][image]") {
  const Image image = rgb({255, 0, 0, 9, 0, 255, 0, 9, 0, 0, 255, 9, 10, 200, 30, 9, 255, 255, 255, 9}, 5, 4);
  CHECK(image_planes(image, 1) == std::vector<uint8_t>{76, 149, 29, 123, 255});
  CHECK(image_planes(image, 3) == std::vector<uint8_t>{255, 0, 0, 10, 255, 0, 255, 0, 200, 255, 0, 0, 255, 30, 255});
}

TEST_CASE("image transform: grey becomes three equal channels", "[data][image]") {
  const Image grey = rgb({7, 99, 250}, 3, 1);
  CHECK(image_planes(grey, 3) == std::vector<uint8_t>{7, 99, 250, 7, 99, 250, 7, 99, 250});
  CHECK(image_planes(rgb({7, 1, 99, 2}, 2, 2), 1) == std::vector<uint8_t>{7, 99});  // grey + alpha
}

TEST_CASE("image transform: an image already of the model's size is taken as it is", "[data][image]") {
  const Image image = rgb({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, 2);
  CHECK(image_sample(image, Shape{3, 2, 2}, ResizeMode::Crop) ==
        std::vector<uint8_t>{1, 4, 7, 10, 2, 5, 8, 11, 3, 6, 9, 12});
}

TEST_CASE("image transform: channel counts other than 1 and 3 and unknown resize modes are refused", "[data][image]") {
  const Image image = rgb({1, 2, 3}, 1);
  CHECK_THROWS_WITH(image_sample(image, Shape{2, 4, 4}, ResizeMode::Crop),
                    Contains("model.input_shape asks for 2") && Contains("1 or 3"));
  CHECK_THROWS_AS(image_sample(image, Shape{4, 4}, ResizeMode::Crop), ConfigError);
  CHECK_THROWS_WITH(parse_resize_mode("squash", "data.image_folder.resize"),
                    Contains("data.image_folder.resize: resize 'squash'") && Contains("crop") && Contains("stretch"));
  CHECK(parse_resize_mode("stretch", "x") == ResizeMode::Stretch);
}
