// The `npy` dataset: read x and y of each split (.npy or .npz), check dtypes and shapes, convert
// x to float (uint8 / 255) and y to int64, then one InMemoryDataset per split.
#include "ingot/data/npy_dataset.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "float_samples.h"
#include "ingot/base/error.h"
#include "ingot/data/data_config.h"
#include "ingot/data/npy.h"

namespace ingot::data {
namespace {

[[noreturn]] void fail(const std::string& what) { throw InputError("data.npy: " + what); }

struct Split {
  std::string x_name, y_name;  // for messages: the file, or "file (member 'x')"
  std::vector<float> x;
  Shape sample;
  std::vector<int64_t> y;
};

std::vector<int64_t> to_int64(const NpyArray& a, const std::string& name) {
  const size_t n = static_cast<size_t>(a.numel()), size = static_cast<size_t>(a.itemsize);
  std::vector<int64_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    uint64_t bits = 0;
    std::memcpy(&bits, a.data.data() + i * size, size);  // little-endian host
    int64_t v = static_cast<int64_t>(bits);
    if (a.kind == 'i' && size < 8 && (bits >> (size * 8 - 1)) != 0) v -= int64_t{1} << (size * 8);
    if (a.kind == 'u' && size == 8 && v < 0) fail(fmt::format("{}: label {} of sample {} is too large", name, bits, i));
    out[i] = v;
  }
  return out;
}

Split load(const NpySource& s) {
  Split out;
  NpyArray x, y;
  try {
    if (s.npz.empty()) {
      out.x_name = s.x;
      out.y_name = s.y;
      x = read_npy(s.x);
      y = read_npy(s.y);
    } else {
      out.x_name = fmt::format("{} (member '{}')", s.npz, s.x);
      out.y_name = fmt::format("{} (member '{}')", s.npz, s.y);
      x = read_npz(s.npz, s.x);
      y = read_npz(s.npz, s.y);
    }
  } catch (const InputError& e) {
    fail(e.what());  // the reader's line, marked as the data section's
  }
  if (!((x.kind == 'f') || (x.kind == 'u' && x.itemsize == 1)))
    fail(fmt::format("{}: x has dtype {}; use float32, float64 or uint8 (x.astype(numpy.float32))", out.x_name,
                     x.dtype_name()));
  const auto& d = x.shape;
  if (d.size() < 2 || d.size() > 4)
    fail(fmt::format("{}: x has shape ({}); expected [N, features], [N, H, W] or [N, C, H, W]", out.x_name,
                     fmt::join(d, ", ")));
  out.sample = d.size() == 2 ? Shape{d[1], 1, 1} : d.size() == 3 ? Shape{1, d[1], d[2]} : Shape{d[1], d[2], d[3]};
  if (d[0] == 0 || out.sample.numel() == 0)
    fail(fmt::format("{}: x has no samples (shape ({}))", out.x_name, fmt::join(d, ", ")));
  if (y.kind != 'i' && y.kind != 'u')
    fail(fmt::format("{}: y has dtype {}; class numbers must be integers (y.astype(numpy.int64))", out.y_name,
                     y.dtype_name()));
  if (y.shape.size() != 1 || y.shape[0] != d[0])
    fail(fmt::format("{}: y has shape ({}) but x ({}) has {} samples; y must be [{}]", out.y_name,
                     fmt::join(y.shape, ", "), out.x_name, d[0], d[0]));
  try {
    out.x = npy_to_floats(x, out.x_name);  // (refuses a NaN or infinite value)
  } catch (const InputError& e) {
    fail(e.what());
  }
  out.y = to_int64(y, out.y_name);
  return out;
}

}  // namespace

DatasetSplits npy_datasets(const NpySource& train, const NpySource& test, const std::vector<std::string>& classes,
                           const Normalize& normalize, const std::optional<NpySource>& validation) {
  std::vector<Split> splits{load(train), load(test)};
  if (validation) splits.push_back(load(*validation));
  for (size_t i = 1; i < splits.size(); ++i)
    if (!(splits[i].sample == splits[0].sample))
      fail(fmt::format("{}: {} samples are {} but the train samples ({}) are {}", splits[i].x_name,
                       i == 1 ? "test" : "validation", splits[i].sample.str(), splits[0].x_name,
                       splits[0].sample.str()));
  int64_t num_classes = static_cast<int64_t>(classes.size());
  std::string hint = fmt::format("; data.npy.classes names {} classes", num_classes);
  if (classes.empty()) {
    for (const Split& s : splits)
      for (int64_t v : s.y) num_classes = std::max(num_classes, v + 1);
    hint = "; class numbers must be 0..K-1";
  }
  std::vector<std::shared_ptr<const Dataset>> sets;
  for (Split& s : splits)
    sets.push_back(dataset_from_floats(std::move(s.x), s.sample, s.y, std::max<int64_t>(num_classes, 1), normalize,
                                       "data.npy: " + s.y_name, hint));
  DatasetSplits out;
  out.class_names = classes;
  out.train = sets[0];
  out.test = sets[1];
  if (sets.size() > 2) out.validation = sets[2];
  return out;
}

void register_npy_dataset(DatasetRegistry& registry) {
  config::Schema keys;
  keys.string("train_x").string("train_y").string("test_x").string("test_y");
  keys.string("validation_x").string("validation_y").string("validation");
  keys.string("train").string("test").string("x").string("y").any("classes");
  registry.add(
      {"npy", std::move(keys),
       [](const YAML::Node& s, const std::string&, const DataConfig& c, uint64_t) {
         const auto str = [&](const char* key, const std::string& fallback = "") {
           return s && s.IsMap() && s[key] ? s[key].Scalar() : fallback;
         };
         const bool npz = !str("train").empty() || !str("test").empty();
         const bool npy =
             !str("train_x").empty() || !str("train_y").empty() || !str("test_x").empty() || !str("test_y").empty();
         if (npz == npy || (npz && (str("train").empty() || str("test").empty())) ||
             (npy &&
              (str("train_x").empty() || str("train_y").empty() || str("test_x").empty() || str("test_y").empty())))
           throw ConfigError(
               "data.npy: give either train_x, train_y, test_x, test_y (.npy files) or train, test (.npz files, "
               "with x and y the member names)");
         std::vector<std::string> classes;
         if (const YAML::Node list = s && s.IsMap() ? s["classes"] : YAML::Node()) {
           if (!list.IsSequence() || list.size() == 0)
             throw ConfigError("data.npy.classes: give a list of class names, e.g. [cat, dog]");
           for (const auto& name : list) classes.push_back(name.Scalar());
         }
         NpySource train{str("train_x"), str("train_y"), ""}, test{str("test_x"), str("test_y"), ""};
         std::optional<NpySource> validation;
         if (npz) {
           train = {str("x", "x"), str("y", "y"), str("train")};
           test = {str("x", "x"), str("y", "y"), str("test")};
           if (!str("validation").empty()) validation = NpySource{str("x", "x"), str("y", "y"), str("validation")};
         } else if (!str("validation_x").empty() || !str("validation_y").empty()) {
           if (str("validation_x").empty() || str("validation_y").empty())
             throw ConfigError("data.npy: give both validation_x and validation_y (.npy files)");
           validation = NpySource{str("validation_x"), str("validation_y"), ""};
         }
         if ((npz && (!str("validation_x").empty() || !str("validation_y").empty())) ||
             (npy && !str("validation").empty()))
           throw ConfigError("data.npy: with .npz files give validation (a .npz); with .npy files validation_x and "
                             "validation_y");
         return npy_datasets(train, test, classes, c.normalize, validation);
       },
       "numpy arrays x [N, ...] and y [N] (data.npy: train_x, train_y, test_x, test_y[, validation_x, validation_y], "
       "or train, test[, validation] .npz with x, y; classes)"});
}

}  // namespace ingot::data
