// The `idx` dataset: read each split's images and labels (read_idx_any), map the image rank to a
// sample shape, scale bytes, then one InMemoryDataset per split.
#include "ingot/data/idx_dataset.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "float_samples.h"
#include "ingot/base/error.h"
#include "ingot/data/data_config.h"
#include "ingot/data/idx.h"

namespace ingot::data {
namespace {

[[noreturn]] void fail(const std::string& what) { throw InputError("data.idx: " + what); }

struct Split {
  std::string images_path, labels_path;
  std::vector<float> x;
  Shape sample;
  std::vector<int64_t> y;
};

Split load(const std::string& images_path, const std::string& labels_path) {
  Split s{images_path, labels_path, {}, {}, {}};
  IdxArray images, labels;
  try {
    images = read_idx_any(images_path);
    labels = read_idx_any(labels_path);
  } catch (const InputError& e) {
    fail(e.what());
  }
  const std::vector<int64_t>& d = images.dims;
  if (d.size() < 2 || d.size() > 4)
    fail(fmt::format("{}: images of shape [{}]; expected [N, features], [N, H, W] or [N, C, H, W]", images_path,
                     fmt::join(d, ", ")));
  s.sample = d.size() == 2 ? Shape{d[1], 1, 1} : d.size() == 3 ? Shape{1, d[1], d[2]} : Shape{d[1], d[2], d[3]};
  if (d[0] == 0 || s.sample.numel() == 0)
    fail(fmt::format("{}: no samples (shape [{}])", images_path, fmt::join(d, ", ")));
  if (labels.dims.size() != 1 || labels.dims[0] != d[0])
    fail(fmt::format("{}: labels of shape [{}] but {} holds {} images; the labels must be [{}]", labels_path,
                     fmt::join(labels.dims, ", "), images_path, d[0], d[0]));
  s.x = idx_sample_values(images);
  try {
    s.y = idx_integers(labels, labels_path);
  } catch (const InputError& e) {
    fail(e.what());
  }
  for (size_t i = 0; i < s.y.size(); ++i)
    if (s.y[i] < 0)
      fail(fmt::format("{}: label {} of sample {} is negative; use class numbers 0..K-1", labels_path, s.y[i], i));
  return s;
}

}  // namespace

DatasetSplits idx_datasets(const IdxFiles& f, const Normalize& normalize) {
  Split splits[2] = {load(f.train_images, f.train_labels), load(f.test_images, f.test_labels)};
  if (!(splits[1].sample == splits[0].sample))
    fail(fmt::format("{}: test samples are {} but the train samples ({}) are {}", splits[1].images_path,
                     splits[1].sample.str(), splits[0].images_path, splits[0].sample.str()));
  int64_t classes = 1;
  for (const Split& s : splits)
    for (int64_t v : s.y) classes = std::max(classes, v + 1);
  DatasetSplits out;
  out.train = dataset_from_floats(std::move(splits[0].x), splits[0].sample, splits[0].y, classes, normalize,
                                  "data.idx: " + splits[0].labels_path, "");
  out.test = dataset_from_floats(std::move(splits[1].x), splits[1].sample, splits[1].y, classes, normalize,
                                 "data.idx: " + splits[1].labels_path, "");
  return out;
}

void register_idx_dataset(DatasetRegistry& registry) {
  config::Schema keys;
  keys.string("train_images", true)
      .string("train_labels", true)
      .string("test_images", true)
      .string("test_labels", true);
  registry.add(
      {"idx", std::move(keys),
       [](const YAML::Node& s, const std::string&, const DataConfig& c, uint64_t) {
         const char* keys[] = {"train_images", "train_labels", "test_images", "test_labels"};
         for (const char* key : keys)
           if (!s || !s.IsMap() || !s[key])
             throw ConfigError(fmt::format(
                 "data.idx.{}: missing; give the four files, e.g. data: {{dataset: idx, idx: {{train_images: "
                 "a-images.idx, train_labels: a-labels.idx, test_images: ..., test_labels: ...}}}}",
                 key));
         return idx_datasets({s["train_images"].Scalar(), s["train_labels"].Scalar(), s["test_images"].Scalar(),
                              s["test_labels"].Scalar()},
                             c.normalize);
       },
       "IDX files (MNIST format, gzipped or not) of any shape (data.idx: train_images, train_labels, test_images, "
       "test_labels)"});
}

}  // namespace ingot::data
