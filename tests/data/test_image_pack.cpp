// Packed image shards (`ingot pack`): a pack reads back each file's bytes in image_folder's order;
// a split given as a pack gives the folder's samples, labels and classes; a truncated shard, another
// version and an index of another length are one line at open; a damaged record is a bad image
// (an error naming the file and the pack, or a counted skip); empty folders and used folders are refused.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "data_test_util.h"
#include "image_test_util.h"
#include "ingot/base/error.h"
#include "ingot/data/data_config.h"
#include "ingot/data/image_folder.h"
#include "ingot/data/image_pack.h"
#include "ingot/data/image_stream.h"

using namespace ingot;
using namespace ingot::data;
using Catch::Matchers::Contains;
using test::TempDir;
namespace fs = std::filesystem;

namespace {

/// root/c<k>/<i>.jpg: RGB JPEGs of about width x height, each with its own pattern.
void jpeg_split(const fs::path& root, int classes, int per_class, int width, int height) {
  for (int c = 0; c < classes; ++c)
    for (int i = 0; i < per_class; ++i) {
      const int w = width + 5 * i, h = height + 3 * c, seed = 10 * c + i;
      std::vector<uint8_t> px(static_cast<size_t>(w * h * 3));
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
          for (int k = 0; k < 3; ++k)
            px[static_cast<size_t>((y * w + x) * 3 + k)] =
                static_cast<uint8_t>(127.5 + 120.0 * std::sin(0.05 * (x + 3 * seed) + 0.03 * (y + 7 * k) + seed));
      const fs::path file = root / ("c" + std::to_string(c)) / (std::to_string(i) + ".jpg");
      fs::create_directories(file.parent_path());
      test::write_plain(file.string(), test::jpeg_bytes(w, h, 3, px, 90));
    }
}

/// A pack of `folder` in `dir` with shards of at most `shard_bytes`.
ImagePackSummary pack(const std::string& folder, const std::string& dir, int64_t shard_bytes = int64_t{1} << 30) {
  ImagePackOptions o;
  o.shard_bytes = shard_bytes;
  return write_image_pack(folder, dir, o);
}

std::vector<float> read_all(const Dataset& d, uint64_t seed, int64_t epoch, std::vector<int64_t>* labels = nullptr) {
  std::vector<float> out(static_cast<size_t>(d.size() * d.sample_numel()));
  for (int64_t i = 0; i < d.size(); ++i) {
    const int64_t label = d.read_sample(i, seed, epoch, out.data() + i * d.sample_numel());
    if (labels) labels->push_back(label);
  }
  return out;
}

DataConfig folder_config(const std::string& train, const std::string& test, const std::string& extra = "") {
  const YAML::Node node = YAML::Load(fmt::format(
      "{{dataset: image_folder, batch_size: 4, image_folder: {{train: {}, test: {}, transforms: {{train: "
      "[{{random_resized_crop: {{size: 20}}}}, hflip, {{color_jitter: {{brightness: 0.3}}}}], test: [{{resize: 24}}, "
      "{{center_crop: 20}}]}}{}}}}}",
      train, test, extra));
  data_schema().validate(node, "data.yaml", "data");
  DataConfig c = parse_data_config(node, "data.yaml");
  c.input_shape = Shape{3, 20, 20};
  return c;
}

/// Replaces `file`'s bytes [at, at + n) with their complement.
void damage(const std::string& file, uint64_t at, uint64_t n) {
  std::vector<uint8_t> bytes = test::read_plain(file);
  for (uint64_t k = at; k < at + n; ++k) bytes[k] = static_cast<uint8_t>(~bytes[k]);
  test::write_plain(file, bytes);
}

}  // namespace

TEST_CASE("image pack: each image reads back as its file's bytes in image_folder's order", "[data][image]") {
  TempDir dir;
  jpeg_split(dir.file("train"), 3, 4, 40, 30);
  const ImagePackSummary s = pack(dir.file("train"), dir.file("pack"), 4000);  // a few images per shard
  CHECK(s.images == 12);
  CHECK(s.classes == 3);
  CHECK(s.shards > 2);
  CHECK(fs::exists(dir.file("pack/pack.json")));
  const ImageFolderListing listing = list_image_folder(dir.file("train"), "test");
  const ImagePack p(dir.file("pack"));
  REQUIRE(p.size() == 12);
  CHECK(p.shards() == s.shards);
  CHECK(p.class_names() == std::vector<std::string>{"c0", "c1", "c2"});
  int64_t total = 0;
  for (int64_t i = 0; i < p.size(); ++i) {
    const std::vector<uint8_t> file = test::read_plain(listing.files[static_cast<size_t>(i)]);
    const std::span<const uint8_t> packed = p.bytes(i);
    CHECK(std::vector<uint8_t>(packed.begin(), packed.end()) == file);
    CHECK(p.label(i) == listing.labels[static_cast<size_t>(i)]);
    CHECK(dir.file("train/" + p.name(i)) == listing.files[static_cast<size_t>(i)]);
    total += static_cast<int64_t>(file.size());
  }
  CHECK(s.bytes == total);
  CHECK(p.where(5) == "c1/1.jpg in pack " + dir.file("pack"));
}

TEST_CASE("image pack: a packed split gives the folder's samples labels and classes", "[data][image]") {
  TempDir dir;
  jpeg_split(dir.file("train"), 3, 3, 40, 30);
  jpeg_split(dir.file("test"), 3, 1, 40, 30);
  pack(dir.file("train"), dir.file("train_pack"), 6000);
  pack(dir.file("test"), dir.file("test_pack"));
  SECTION("without transforms: the folder's values in memory and the pack's streamed are equal") {
    ImageFolderOptions o;
    o.train = dir.file("train");
    o.test = dir.file("test");
    const Normalize norm{{0.5f, 0.4f, 0.3f}, {0.2f, 0.25f, 0.3f}};
    const DatasetSplits folder = image_folder_datasets(o, Shape{3, 16, 20}, norm);
    o.train = dir.file("train_pack");
    o.test = dir.file("test_pack");
    const DatasetSplits packed = image_folder_datasets(o, Shape{3, 16, 20}, norm);
    REQUIRE(dynamic_cast<const ImageStreamDataset*>(packed.train.get()) != nullptr);
    CHECK(packed.class_names == folder.class_names);
    std::vector<int64_t> la, lb;
    CHECK(read_all(*packed.train, 1, 0, &la) == read_all(*folder.train, 1, 0, &lb));
    CHECK(la == lb);
    CHECK(read_all(*packed.test, 0, 0) == read_all(*folder.test, 0, 0));
    CHECK(packed.train->pad_value(2) == folder.train->pad_value(2));
  }
  SECTION("with transforms: the same batches for every epoch and worker count") {
    DataConfig c = folder_config(dir.file("train"), dir.file("test"));
    DataLoaders folder = make_data_loaders(c, 11);
    const test::EpochData want = test::take_epoch(*folder.train, 1), want_test = test::take_epoch(*folder.test, 0);
    for (const int workers : {0, 2}) {
      c = folder_config(dir.file("train_pack"), dir.file("test"));
      c.workers = workers;
      DataLoaders packed = make_data_loaders(c, 11);
      REQUIRE(packed.train->dataset().streamed());
      const test::EpochData got = test::take_epoch(*packed.train, 1);
      CHECK(got.inputs == want.inputs);
      CHECK(got.targets == want.targets);
      CHECK(test::take_epoch(*packed.test, 0).inputs == want_test.inputs);
    }
  }
}

TEST_CASE("image pack: splits with other classes than the pack are a config error", "[data][image]") {
  TempDir dir;
  jpeg_split(dir.file("train"), 3, 2, 32, 32);
  jpeg_split(dir.file("test"), 2, 1, 32, 32);
  pack(dir.file("train"), dir.file("pack"));
  ImageFolderOptions o;
  o.train = dir.file("pack");
  o.test = dir.file("test");
  try {
    image_folder_datasets(o, Shape{3, 16, 16}, Normalize{});
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    const std::string msg = e.what();
    CHECK_THAT(msg, Contains("test: " + dir.file("test")) && Contains("missing: [c2]") && Contains("ingot pack"));
    CHECK(msg.find('\n') == std::string::npos);
  }
}

TEST_CASE("image pack: a truncated shard is one line naming it at open", "[data][image]") {
  TempDir dir;
  jpeg_split(dir.file("train"), 2, 3, 40, 30);
  pack(dir.file("train"), dir.file("pack"), 4000);
  const std::string shard = dir.file("pack/shard-00001.bin");
  std::vector<uint8_t> bytes = test::read_plain(shard);
  bytes.resize(bytes.size() - 10);
  test::write_plain(shard, bytes);
  const std::string msg = test::input_error_of([&] { ImagePack p(dir.file("pack")); });
  CHECK_THAT(msg, Contains(shard) && Contains("truncated") && Contains("ingot pack " + dir.file("train")));
  CHECK(msg.find('\n') == std::string::npos);
  fs::remove(shard);
  CHECK_THAT(test::input_error_of([&] { ImagePack p(dir.file("pack")); }),
             Contains(shard) && Contains("no such file") && Contains("ingot pack"));
}

TEST_CASE("image pack: another version or a short index is refused at open", "[data][image]") {
  TempDir dir;
  jpeg_split(dir.file("train"), 2, 2, 32, 32);
  pack(dir.file("train"), dir.file("pack"));
  const std::string header = dir.file("pack/pack.json"), index = dir.file("pack/index.bin");
  const std::vector<uint8_t> original = test::read_plain(header);
  std::string text(original.begin(), original.end());
  const size_t at = text.find("\"version\": 1");
  REQUIRE(at != std::string::npos);
  text.replace(at, 12, "\"version\": 2");
  test::write_plain(header, std::vector<uint8_t>(text.begin(), text.end()));
  std::string msg = test::input_error_of([&] { ImagePack p(dir.file("pack")); });
  CHECK_THAT(msg, Contains(header) && Contains("version 2") && Contains("reads version 1") && Contains("ingot pack"));
  // Through the config, the same line.
  ImageFolderOptions o;
  o.train = dir.file("pack");
  o.test = dir.file("train");
  CHECK_THAT(test::input_error_of([&] {
               image_folder_datasets(o, Shape{3, 16, 16}, Normalize{});
             }),
             Contains("version 2"));
  test::write_plain(header, original);
  std::vector<uint8_t> idx = test::read_plain(index);
  idx.resize(idx.size() - 32);  // one record short
  test::write_plain(index, idx);
  msg = test::input_error_of([&] { ImagePack p(dir.file("pack")); });
  CHECK_THAT(msg, Contains(index) && Contains("4 images") && Contains("ingot pack"));
  CHECK(msg.find('\n') == std::string::npos);
  // Without pack.json (a packing that never finished), the folder is neither a pack nor an image folder.
  fs::remove(header);
  CHECK_THAT(test::input_error_of([&] {
               image_folder_datasets(o, Shape{3, 16, 16}, Normalize{});
             }),
             Contains("without its pack.json") && Contains("ingot pack"));
}

TEST_CASE("image pack: a damaged record is a bad image - an error naming it or a counted skip", "[data][image]") {
  TempDir dir;
  jpeg_split(dir.file("train"), 2, 3, 40, 30);
  jpeg_split(dir.file("test"), 2, 1, 40, 30);
  pack(dir.file("train"), dir.file("pack"));
  uint64_t offset = 0;
  {
    const ImagePack p(dir.file("pack"));
    REQUIRE(p.name(1) == "c0/1.jpg");
    offset = static_cast<uint64_t>(p.bytes(1).data() - p.bytes(0).data());
  }
  damage(dir.file("pack/shard-00000.bin"), offset + 100, 4);  // inside image 1, after its header
  ImageFolderOptions o;
  o.train = dir.file("pack");
  o.test = dir.file("test");
  o.train_transforms = TransformPipeline::parse(YAML::Load("[{random_resized_crop: {size: 16}}]"), "t.yaml", "t");
  o.test_transforms = TransformPipeline::parse(YAML::Load("[{resize: 16}, {center_crop: 16}]"), "t.yaml", "t");
  const DatasetSplits strict = image_folder_datasets(o, Shape{3, 16, 16}, Normalize{});
  std::vector<float> one(3 * 16 * 16);
  const std::string msg = test::input_error_of([&] { strict.train->read_sample(1, 0, 0, one.data()); });
  CHECK_THAT(msg, Contains("c0/1.jpg in pack " + dir.file("pack")) && Contains("CRC32") && Contains("ingot pack"));
  CHECK(msg.find('\n') == std::string::npos);
  o.on_bad_image = BadImagePolicy::Skip;
  const DatasetSplits lenient = image_folder_datasets(o, Shape{3, 16, 16}, Normalize{});
  std::vector<int64_t> labels;
  const std::string warned = test::stderr_of([&] { read_all(*lenient.train, 0, 0, &labels); });
  CHECK(lenient.train->skipped_samples() == 1);
  CHECK(labels == std::vector<int64_t>{0, 0, 0, 1, 1, 1});  // image 1 -> image 2 (c0)
  CHECK_THAT(warned, Contains("c0/1.jpg in pack") && Contains("skipped a bad image"));
}

TEST_CASE("image pack: an empty or missing folder and a used output folder are refused", "[data][image]") {
  TempDir dir;
  fs::create_directories(dir.file("empty"));
  CHECK_THAT(test::input_error_of([&] { pack(dir.file("empty"), dir.file("p1")); }),
             Contains("ingot pack: " + dir.file("empty") + " has no sub-folders"));
  fs::create_directories(dir.file("bare/cat"));
  CHECK_THAT(test::input_error_of([&] { pack(dir.file("bare"), dir.file("p1")); }),
             Contains("class folder " + dir.file("bare/cat") + " has no images"));
  CHECK_THAT(test::input_error_of([&] { pack(dir.file("missing"), dir.file("p1")); }), Contains("is not a folder"));
  CHECK_FALSE(fs::exists(dir.file("p1/pack.json")));
  // An output folder that holds anything needs --force, which replaces the pack and keeps the rest.
  jpeg_split(dir.file("train"), 2, 2, 32, 32);
  pack(dir.file("train"), dir.file("p2"), 2000);
  REQUIRE(fs::exists(dir.file("p2/shard-00001.bin")));
  test::write_plain(dir.file("p2/notes.txt"), {'x'});
  CHECK_THAT(test::input_error_of([&] { pack(dir.file("train"), dir.file("p2")); }),
             Contains(dir.file("p2") + " is not empty") && Contains("--force"));
  ImagePackOptions force;
  force.force = true;
  CHECK(write_image_pack(dir.file("train"), dir.file("p2"), force).shards == 1);
  CHECK_FALSE(fs::exists(dir.file("p2/shard-00001.bin")));  // the earlier pack's second shard went with it
  CHECK(fs::exists(dir.file("p2/notes.txt")));
  CHECK(ImagePack(dir.file("p2")).size() == 4);
  CHECK_THAT(test::input_error_of([&] { pack(dir.file("train"), dir.file("train/packed")); }),
             Contains("inside") && Contains("choose a folder outside it"));
}
