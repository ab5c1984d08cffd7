// The image_folder dataset on small folders written here: class names from the sub-folders,
// labels, sample shape and normalisation, nested and skipped files, the validation folder, and
// one error line for each kind of bad folder or file; also through data: and the loaders.
#include <png.h>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "data_test_util.h"
#include "image_test_util.h"
#include "ingot/base/error.h"
#include "ingot/data/data_config.h"
#include "ingot/data/image_folder.h"

using namespace ingot;
using namespace ingot::data;
using Catch::Matchers::Contains;
using test::TempDir;

namespace {

/// A `size` x `size` grey PNG whose every pixel is `value`.
void flat_png(const std::string& path, uint16_t value, int size = 4) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  test::PngSpec s;
  s.width = s.height = size;
  s.color_type = PNG_COLOR_TYPE_GRAY;
  s.samples.assign(static_cast<size_t>(size * size), value);
  test::write_png(path, s);
}

/// root/<class>/<n>.png for each class, pixel value = 10 * (class index + 1).
void make_split(const std::filesystem::path& root, const std::vector<std::string>& classes, int per_class) {
  for (size_t c = 0; c < classes.size(); ++c)
    for (int i = 0; i < per_class; ++i)
      flat_png((root / classes[c] / (std::to_string(i) + ".png")).string(), static_cast<uint16_t>(10 * (c + 1)));
}

std::vector<float> sample_of(const Dataset& d, int64_t i, int64_t* label) {
  std::vector<float> out(static_cast<size_t>(d.sample_numel()));
  *label = d.read(i, out.data());
  return out;
}

ImageFolderOptions options(const TempDir& dir) {
  ImageFolderOptions o;
  o.train = dir.file("train");
  o.test = dir.file("test");
  return o;
}

}  // namespace

TEST_CASE("image folder: classes are the sorted sub-folders, labels follow them", "[data][image]") {
  TempDir dir;
  make_split(dir.file("train"), {"cat", "ant", "bee"}, 2);
  make_split(dir.file("test"), {"cat", "ant", "bee"}, 1);
  const DatasetSplits s = image_folder_datasets(options(dir), Shape{1, 4, 4}, Normalize{{0.0f}, {1.0f}});
  CHECK(s.class_names == std::vector<std::string>{"ant", "bee", "cat"});
  REQUIRE(s.train->size() == 6);
  CHECK(s.test->size() == 3);
  CHECK(s.train->num_classes() == 3);
  CHECK(s.validation == nullptr);
  for (int64_t i = 0; i < 6; ++i) {
    int64_t label = -1;
    const std::vector<float> x = sample_of(*s.train, i, &label);
    CHECK(label == i / 2);
    // ant was written as class 1 (value 20), bee as 2 (30), cat as 0 (10).
    const float value = std::vector<float>{20.0f, 30.0f, 10.0f}[static_cast<size_t>(label)] / 255.0f;
    CHECK(x[0] == Approx(value));
    CHECK(x[15] == Approx(value));
  }
}

TEST_CASE("image folder: samples take the model's shape and data.normalize", "[data][image]") {
  TempDir dir;
  for (const char* split : {"train", "test"}) {
    flat_png(dir.file(std::string(split) + "/a/big.png"), 255, 10);
    flat_png(dir.file(std::string(split) + "/b/small.png"), 0, 3);
  }
  const DatasetSplits s = image_folder_datasets(options(dir), Shape{3, 6, 5}, Normalize{{0.5f}, {0.25f}});
  CHECK(s.train->sample_shape() == Shape{3, 6, 5});
  int64_t label = -1;
  const std::vector<float> a = sample_of(*s.train, 0, &label);
  CHECK(a.size() == 90);
  CHECK(a[89] == Approx(2.0f));
  CHECK(sample_of(*s.train, 1, &label)[0] == Approx(-2.0f));
  CHECK(s.train->pad_value(0) == Approx(-2.0f));
}

TEST_CASE("image folder: nested images count, other files are skipped with one note", "[data][image]") {
  TempDir dir;
  make_split(dir.file("train"), {"a", "b"}, 1);
  make_split(dir.file("test"), {"a", "b"}, 1);
  flat_png(dir.file("train/a/deeper/more.png"), 10);
  std::ofstream(dir.file("train/a/readme.txt")) << "not an image";
  std::ofstream(dir.file("train/LICENSE")) << "beside the classes";
  std::string printed;
  DatasetSplits s;
  printed = test::stderr_of([&] { s = image_folder_datasets(options(dir), Shape{1, 4, 4}, Normalize{}); });
  CHECK(s.train->size() == 3);
  CHECK_THAT(printed, Contains("skipped 2 files that are not .png, .jpg or .jpeg"));
  CHECK(std::count(printed.begin(), printed.end(), '\n') == 1);
}

TEST_CASE("image folder: JPEG and PNG files mix in one class", "[data][image]") {
  TempDir dir;
  make_split(dir.file("train"), {"a"}, 1);
  make_split(dir.file("test"), {"a"}, 1);
  const std::vector<uint8_t> jpeg = test::jpeg_bytes(8, 8, 3, std::vector<uint8_t>(192, 128));
  std::ofstream(dir.file("train/a/photo.JPG"), std::ios::binary)
      .write(reinterpret_cast<const char*>(jpeg.data()), static_cast<std::streamsize>(jpeg.size()));
  const DatasetSplits s = image_folder_datasets(options(dir), Shape{1, 4, 4}, Normalize{});
  REQUIRE(s.train->size() == 2);
  int64_t label = -1;
  CHECK(sample_of(*s.train, 1, &label)[5] == Approx(128.0f / 255.0f).margin(3.0 / 255.0));  // sorted: 0.png, photo.JPG
}

TEST_CASE("image folder: a validation folder gives the validation split", "[data][image]") {
  TempDir dir;
  make_split(dir.file("train"), {"a", "b"}, 2);
  make_split(dir.file("test"), {"a", "b"}, 1);
  make_split(dir.file("val"), {"a", "b"}, 3);
  ImageFolderOptions o = options(dir);
  o.validation = dir.file("val");
  const DatasetSplits s = image_folder_datasets(o, Shape{1, 2, 2}, Normalize{});
  REQUIRE(s.validation != nullptr);
  CHECK(s.validation->size() == 6);
  CHECK(s.validation->num_classes() == 2);
}

TEST_CASE("image folder: test classes that differ from train's are one error naming both", "[data][image]") {
  TempDir dir;
  make_split(dir.file("train"), {"a", "b", "c"}, 1);
  make_split(dir.file("test"), {"a", "b", "d"}, 1);
  const std::string msg = test::input_error_of([&] {
    image_folder_datasets(options(dir), Shape{1, 4, 4}, Normalize{});
  });
  CHECK_THAT(msg, Contains("data.image_folder: test: " + dir.file("test") + " has class folders [a, b, d]") &&
                      Contains("missing: [c], extra: [d]"));
}

TEST_CASE("image folder: an empty class folder is an error naming it", "[data][image]") {
  TempDir dir;
  make_split(dir.file("train"), {"a"}, 1);
  make_split(dir.file("test"), {"a"}, 1);
  std::filesystem::create_directories(dir.file("train/b"));
  std::filesystem::create_directories(dir.file("test/b"));
  CHECK_THAT(test::input_error_of([&] {
               image_folder_datasets(options(dir), Shape{1, 4, 4}, Normalize{});
             }),
             Contains("class folder " + dir.file("train/b") + " has no images"));
}

TEST_CASE("image folder: a missing folder or one without class folders is refused", "[data][image]") {
  TempDir dir;
  make_split(dir.file("train"), {"a"}, 1);
  CHECK_THAT(test::input_error_of([&] {
               image_folder_datasets(options(dir), Shape{1, 4, 4}, Normalize{});
             }),
             Contains("test: " + dir.file("test") + " is not a folder"));
  flat_png(dir.file("test/loose.png"), 1);
  CHECK_THAT(test::input_error_of([&] {
               image_folder_datasets(options(dir), Shape{1, 4, 4}, Normalize{});
             }),
             Contains("has no sub-folders"));
}

TEST_CASE("image folder: a corrupt image among many is one error naming it", "[data][image]") {
  TempDir dir;
  make_split(dir.file("train"), {"a", "b"}, 20);
  make_split(dir.file("test"), {"a", "b"}, 1);
  std::ofstream(dir.file("train/b/7.png"), std::ios::binary | std::ios::trunc) << "\x89PNG\r\n\x1a\n broken";
  const std::string msg = test::input_error_of([&] {
    image_folder_datasets(options(dir), Shape{1, 4, 4}, Normalize{});
  });
  CHECK_THAT(msg, Contains(dir.file("train/b/7.png") + ": corrupt or truncated PNG"));
  CHECK(msg.find('\n') == std::string::npos);
}

TEST_CASE("image folder: of several corrupt images the first in file order is reported", "[data][image]") {
  TempDir dir;
  make_split(dir.file("train"), {"a", "b"}, 20);  // 40 files, decoded on up to 2 threads taking turns
  make_split(dir.file("test"), {"a", "b"}, 1);
  for (const char* name : {"train/b/0.png", "train/a/3.png"})  // sorted: a/3.png is file 13, b/0.png file 20
    std::ofstream(dir.file(name), std::ios::binary | std::ios::trunc) << "\x89PNG\r\n\x1a\n broken";
  CHECK_THAT(test::input_error_of([&] {
               image_folder_datasets(options(dir), Shape{1, 4, 4}, Normalize{});
             }),
             Contains(dir.file("train/a/3.png") + ": corrupt"));
}

TEST_CASE("image folder: through data: it needs model.input_shape and feeds the loaders", "[data][image]") {
  TempDir dir;
  make_split(dir.file("train"), {"x", "y"}, 3);
  make_split(dir.file("test"), {"x", "y"}, 2);
  const YAML::Node node = YAML::Load(fmt::format(
      "{{dataset: image_folder, workers: 0, batch_size: 2, image_folder: {{train: {}, test: {}, resize: stretch}}}}",
      dir.file("train"), dir.file("test")));
  data_schema().validate(node, "data.yaml", "data");
  DataConfig c = parse_data_config(node, "data.yaml");
  CHECK_THROWS_WITH(make_data_loaders(c, 1), Contains("set model.input_shape"));
  c.input_shape = Shape{1, 3, 3};
  const DataLoaders l = make_data_loaders(c, 1);
  CHECK(l.train->dataset().size() == 6);
  CHECK(l.test->dataset().sample_shape() == Shape{1, 3, 3});
  CHECK(l.class_names == std::vector<std::string>{"x", "y"});
  CHECK(data_config_yaml(c)["normalize"]["mean"].as<float>() == 0.0f);
  CHECK_THROWS_WITH(
      data_schema().validate(YAML::Load("{dataset: image_folder, image_folder: {train: a, test: b, resize: squash}}"),
                             "d.yaml", "data"),
      Contains("squash"));
}
