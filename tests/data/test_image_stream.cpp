// Streamed image folders: decoded by the loader's workers when a sample is read. Without
// transforms they give the in-memory values; with transforms every sample's pixels depend on
// (seed, epoch, index) only, not on the worker count; a reduced JPEG decode stays close to the
// full one; bad files stop the read with one line naming them, or are counted and replaced.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "data_test_util.h"
#include "image_test_util.h"
#include "ingot/base/error.h"
#include "ingot/data/data_config.h"
#include "ingot/data/image_folder.h"
#include "ingot/data/image_stream.h"

using namespace ingot;
using namespace ingot::data;
using Catch::Matchers::Contains;
using test::TempDir;

namespace {

/// A smooth RGB (or grey) JPEG of width x height whose pattern depends on `seed`.
void smooth_jpeg(const std::string& path, int width, int height, int seed, int components = 3) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::vector<uint8_t> px(static_cast<size_t>(width * height * components));
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      for (int c = 0; c < components; ++c)
        px[static_cast<size_t>((y * width + x) * components + c)] = static_cast<uint8_t>(
            127.5 + 120.0 * std::sin(0.02 * (x + 3 * seed) + 0.013 * (y + 11 * c) + 0.5 * seed + c));
  test::write_plain(path, test::jpeg_bytes(width, height, components, px, 92));
}

/// root/<class>/<i>.jpg, sizes varying around width x height.
void jpeg_split(const std::filesystem::path& root, int classes, int per_class, int width, int height) {
  for (int c = 0; c < classes; ++c)
    for (int i = 0; i < per_class; ++i)
      smooth_jpeg((root / ("c" + std::to_string(c)) / (std::to_string(i) + ".jpg")).string(), width + 7 * i,
                  height + 5 * c, 10 * c + i);
}

ImageFolderOptions options(const TempDir& dir) {
  ImageFolderOptions o;
  o.train = dir.file("train");
  o.test = dir.file("test");
  return o;
}

TransformPipeline pipeline(const std::string& yaml) {
  return TransformPipeline::parse(YAML::Load(yaml), "t.yaml", "t");
}

std::vector<float> read_all(const Dataset& d, uint64_t seed, int64_t epoch, std::vector<int64_t>* labels = nullptr) {
  std::vector<float> out(static_cast<size_t>(d.size() * d.sample_numel()));
  for (int64_t i = 0; i < d.size(); ++i) {
    const int64_t label = d.read_sample(i, seed, epoch, out.data() + i * d.sample_numel());
    if (labels) labels->push_back(label);
  }
  return out;
}

double mean_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0.0;
  for (size_t i = 0; i < a.size(); ++i) s += std::abs(a[i] - b[i]);
  return s / static_cast<double>(a.size());
}

}  // namespace

TEST_CASE("image stream: without transforms a streamed folder gives the in-memory values", "[data][image]") {
  TempDir dir;
  jpeg_split(dir.file("train"), 2, 3, 40, 30);
  jpeg_split(dir.file("test"), 2, 1, 40, 30);
  ImageFolderOptions o = options(dir);
  const Normalize norm{{0.5f, 0.4f, 0.3f}, {0.2f, 0.25f, 0.3f}};
  o.stream = ImageFolderOptions::Stream::Off;
  const DatasetSplits memory = image_folder_datasets(o, Shape{3, 16, 20}, norm);
  o.stream = ImageFolderOptions::Stream::On;
  const DatasetSplits stream = image_folder_datasets(o, Shape{3, 16, 20}, norm);
  REQUIRE(dynamic_cast<const ImageStreamDataset*>(stream.train.get()) != nullptr);
  REQUIRE(dynamic_cast<const ImageStreamDataset*>(memory.train.get()) == nullptr);
  std::vector<int64_t> la, lb;
  CHECK(read_all(*stream.train, 3, 1, &la) == read_all(*memory.train, 3, 1, &lb));
  CHECK(la == lb);
  CHECK(stream.train->pad_value(1) == memory.train->pad_value(1));
}

TEST_CASE("image stream: transformed samples depend on seed epoch and index only", "[data][image]") {
  TempDir dir;
  jpeg_split(dir.file("train"), 3, 4, 64, 48);
  jpeg_split(dir.file("test"), 3, 1, 64, 48);
  const YAML::Node node = YAML::Load(fmt::format(
      "{{dataset: image_folder, batch_size: 5, image_folder: {{train: {}, test: {}, transforms: {{train: "
      "[{{random_resized_crop: {{size: 24}}}}, hflip, {{color_jitter: {{brightness: 0.4, saturation: 0.4}}}}], "
      "test: [{{resize: 28}}, {{center_crop: 24}}]}}}}}}",
      dir.file("train"), dir.file("test")));
  data_schema().validate(node, "data.yaml", "data");
  DataConfig c = parse_data_config(node, "data.yaml");
  c.input_shape = Shape{3, 24, 24};
  std::vector<test::EpochData> runs;
  for (const int workers : {0, 1, 3}) {
    c.workers = workers;
    DataLoaders l = make_data_loaders(c, 7);
    REQUIRE(dynamic_cast<const ImageStreamDataset*>(&l.train->dataset()) != nullptr);
    CHECK(l.train->dataset().sample_shape() == Shape{3, 24, 24});
    runs.push_back(test::take_epoch(*l.train, 2));
    if (workers == 0) {
      const test::EpochData other = test::take_epoch(*l.train, 3);
      CHECK(other.inputs != runs.back().inputs);  // another epoch draws again
      const test::EpochData t1 = test::take_epoch(*l.test, 0), t2 = test::take_epoch(*l.test, 5);
      CHECK(t1.inputs == t2.inputs);  // the test steps draw nothing
    }
  }
  CHECK(runs[0].inputs == runs[1].inputs);
  CHECK(runs[0].inputs == runs[2].inputs);
  CHECK(runs[0].targets == runs[2].targets);
}

TEST_CASE("image stream: a JPEG decoded at reduced scale stays close to the full decode", "[data][image]") {
  TempDir dir;
  smooth_jpeg(dir.file("a/big.jpg"), 640, 480, 1);
  ImageStreamOptions o;
  o.transforms = pipeline("[{resize: 60}, {center_crop: 56}]");
  o.sample = Shape{3, 56, 56};
  o.source = "test";
  TransformRng rng(1, 0, 0);
  REQUIRE(o.transforms.plan(480, 640, rng).max_decode_divisor == 8);
  const ImageStreamDataset reduced({dir.file("a/big.jpg")}, {0}, 1, o);
  o.reduced_decode = false;
  const ImageStreamDataset full({dir.file("a/big.jpg")}, {0}, 1, o);
  const std::vector<float> a = read_all(reduced, 0, 0), b = read_all(full, 0, 0);
  CHECK(a != b);                             // the reduced decode ran
  CHECK(mean_abs_diff(a, b) * 255.0 < 2.0);  // in levels of 0..255
}

TEST_CASE("image stream: a bad image is one error naming it or a counted skip", "[data][image]") {
  TempDir dir;
  jpeg_split(dir.file("train"), 2, 3, 32, 32);
  jpeg_split(dir.file("test"), 2, 1, 32, 32);
  const std::string truncated = dir.file("train/c0/1.jpg"), cmyk = dir.file("train/c1/0.jpg");
  std::vector<uint8_t> bytes = test::read_plain(truncated);
  bytes.resize(bytes.size() / 2);
  test::write_plain(truncated, bytes);
  test::write_plain(cmyk, test::jpeg_bytes(8, 8, 4, std::vector<uint8_t>(8 * 8 * 4, 90)));
  ImageFolderOptions o = options(dir);
  o.train_transforms = pipeline("[{random_resized_crop: {size: 16}}]");
  o.test_transforms = pipeline("[{resize: 16}, {center_crop: 16}]");
  const DatasetSplits strict = image_folder_datasets(o, Shape{3, 16, 16}, Normalize{});
  std::vector<float> one(3 * 16 * 16);
  const std::string msg = test::input_error_of([&] { strict.train->read_sample(1, 0, 0, one.data()); });
  CHECK_THAT(msg, Contains(truncated) && Contains("corrupt or truncated JPEG"));
  CHECK(msg.find('\n') == std::string::npos);
  CHECK_THAT(test::input_error_of([&] { strict.train->read_sample(3, 0, 0, one.data()); }),
             Contains(cmyk) && Contains("CMYK"));
  o.on_bad_image = BadImagePolicy::Skip;
  const DatasetSplits lenient = image_folder_datasets(o, Shape{3, 16, 16}, Normalize{});
  std::vector<int64_t> labels;
  std::string warned = test::stderr_of([&] { read_all(*lenient.train, 0, 0, &labels); });
  CHECK(lenient.train->skipped_samples() == 2);
  CHECK(labels == std::vector<int64_t>{0, 0, 0, 1, 1, 1});  // file 1 -> file 2 (c0), file 3 -> file 4 (c1)
  CHECK_THAT(warned, Contains(truncated) && Contains(cmyk) && Contains("skipped a bad image"));
  warned = test::stderr_of([&] { read_all(*lenient.train, 0, 1); });  // named once, counted again
  CHECK(warned.find(truncated) == std::string::npos);
  CHECK(lenient.train->skipped_samples() == 4);
  // In memory, skip drops the bad files at load, saying so.
  o.train_transforms = o.test_transforms = TransformPipeline{};
  o.stream = ImageFolderOptions::Stream::Off;
  DatasetSplits dropped;
  warned = test::stderr_of([&] { dropped = image_folder_datasets(o, Shape{3, 16, 16}, Normalize{}); });
  CHECK(dropped.train->size() == 4);
  CHECK_THAT(warned, Contains("2 of 6 images skipped as bad"));
}

TEST_CASE("image stream: config errors name the key", "[data][image]") {
  const auto check = [](const std::string& section, const std::string& want) {
    const YAML::Node node = YAML::Load("{dataset: image_folder, image_folder: {train: a, test: b, " + section + "}}");
    const auto make = [&] {
      data_schema().validate(node, "d.yaml", "data");
      DataConfig c = parse_data_config(node, "d.yaml");
      c.input_shape = Shape{3, 8, 8};
      make_data_loaders(c, 0);
    };
    CHECK_THROWS_WITH(make(), Contains(want));
  };
  check("on_bad_image: ignore", "ignore");
  check("transforms: {train: [{random_resized_crop: {size: 8}}]}", "give both train and test");
  check("stream: maybe", "maybe");
}
